import type { TranscribedWord } from "../../engines/transcriber";
import type { Segment, Word } from "./schema";

const round = (x: number) => Math.round(x * 1000) / 1000;

/**
 * An engine's words in the recording's times (`place` maps a time of the audio sent back),
 * kept inside their segment's [start, end] and in order; a word the engine could not score
 * takes its segment's confidence. Empty words (an engine's stray space) are left out.
 */
export function placeWords(
  words: readonly TranscribedWord[],
  segment: { start: number; end: number; confidence: number },
  place: (t: number, edge: "start" | "end") => number,
): Word[] {
  const out: Word[] = [];
  const clamp = (t: number) => round(Math.min(segment.end, Math.max(segment.start, t)));
  for (const w of words) {
    const text = w.text.trim();
    if (!text) continue;
    const start = Math.max(out.at(-1)?.start ?? segment.start, clamp(place(w.start, "start")));
    const end = Math.max(start, clamp(place(w.end, "end")));
    out.push({ start, end, text, confidence: round(Math.min(1, Math.max(0, w.confidence ?? segment.confidence))) });
  }
  return out;
}

type WithWords = Pick<Segment, "start" | "end" | "text" | "words">;

/** The segment's words as the text splits them, each with its time: the engine's own, else estimated. */
export function timedWords(segment: WithWords): { text: string; start: number; end: number }[] {
  if (segment.words?.length) return segment.words;
  // No word times: the segment's time spread over its words in proportion to their letters.
  const texts = segment.text.split(/\s+/).filter(Boolean);
  const letters = texts.reduce((n, w) => n + w.length, 0);
  const perLetter = letters > 0 ? (segment.end - segment.start) / letters : 0;
  let at = segment.start;
  return texts.map((text) => {
    const start = at;
    at += text.length * perLetter;
    return { text, start: round(start), end: round(at) };
  });
}

/**
 * Words `from`..`to` (exclusive) of the segment as a segment of their own: its text, its
 * time from the first word's start to the last one's end (the segment's own at its ends),
 * its words where it has them.
 */
export function sliceSegment<T extends WithWords>(segment: T, from: number, to: number): T {
  const words = timedWords(segment);
  const count = words.length;
  const start = from === 0 ? segment.start : words[from]!.start;
  const end = to === count ? segment.end : segment.words?.length ? words[to - 1]!.end : words[to]!.start;
  const part = {
    ...segment,
    start,
    end,
    text: words
      .slice(from, to)
      .map((w) => w.text)
      .join(" "),
  };
  return segment.words?.length ? { ...part, words: segment.words.slice(from, to) } : part;
}

/** Two neighbouring parts as one: `a`'s start, `b`'s end, texts joined, words kept only when both have them. */
export function joinSegments<T extends WithWords>(a: T, b: T): T {
  const { words: _, ...joined } = { ...a, end: b.end, text: `${a.text} ${b.text}` };
  return a.words && b.words ? ({ ...joined, words: [...a.words, ...b.words] } as T) : (joined as T);
}

/**
 * The segment with `text` in place of its own. Its words spelled the old text, so they go
 * when the text changes: a word list that disagrees with its segment would highlight, cut
 * and cite words nobody said (decision 185).
 */
export function withText<T extends { text: string; words?: unknown }>(segment: T, text: string): T {
  if (text === segment.text) return segment;
  const { words: _, ...rest } = segment;
  return { ...rest, text } as T;
}
