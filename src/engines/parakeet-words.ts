import type { TranscribedSegment, TranscribedWord } from "./transcriber";

/** One decoded piece as Parley's addon gives it: times in ms from the start of the audio (TDT durations), its text with a word's leading space. */
export type ParakeetToken = { text: string; t0: number; t1: number; p: number; wordStart: boolean };

/** A pause this long between words ends a segment, as does a sentence's end or this much speech. */
const PAUSE_SECONDS = 1;
const MAX_SEGMENT_SECONDS = 30;
const SENTENCE_END = /[.?!…。]$/;

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

/**
 * Parakeet decodes a whole recording as one run of tokens; Parley's segments are what a
 * reader and the diarizer need: words from the pieces (a piece that starts no word, such as
 * punctuation or a word's continuation, joins the word before), segments cut at sentence
 * ends and pauses. A word's confidence is its pieces' mean probability; times are clamped to
 * the audio's `seconds`.
 */
export function segmentsFromTokens(tokens: readonly ParakeetToken[], seconds: number): TranscribedSegment[] {
  const clamp = (ms: number) => Math.min(seconds, Math.max(0, ms / 1000));
  const words: (TranscribedWord & { p: number[] })[] = [];
  for (const t of tokens) {
    const last = words.at(-1);
    if (last && !t.wordStart) {
      last.text += t.text;
      last.end = Math.max(last.end, clamp(t.t1));
      last.p.push(t.p);
    } else if (t.text.trim()) {
      const start = clamp(t.t0);
      words.push({ start, end: Math.max(start, clamp(t.t1)), text: t.text.trimStart(), confidence: null, p: [t.p] });
    }
  }
  const segments: TranscribedSegment[] = [];
  let current: TranscribedWord[] = [];
  const close = () => {
    if (!current.length) return;
    const confidences = current.map((w) => w.confidence!);
    segments.push({
      start: current[0]!.start,
      end: current.at(-1)!.end,
      text: current.map((w) => w.text).join(" "),
      confidence: mean(confidences),
      words: current,
    });
    current = [];
  };
  for (const { p, ...w } of words) {
    const word = { ...w, confidence: mean(p) };
    const previous = current.at(-1);
    if (previous && (word.start - previous.end >= PAUSE_SECONDS || word.end - current[0]!.start > MAX_SEGMENT_SECONDS)) close();
    current.push(word);
    if (SENTENCE_END.test(word.text)) close();
  }
  close();
  return segments;
}
