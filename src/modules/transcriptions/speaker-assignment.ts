import type { SpeakerTurn } from "../../engines/diarizer";
import type { Segment } from "./schema";
import { joinSegments, sliceSegment, timedWords } from "./words";

/** A segment is split only where it overlaps each of two turns by this much (seconds): less is an edge's noise. */
const MIN_PART_SECONDS = 0.3;

type Unlabelled = Omit<Segment, "speaker">;

/** The label the pipeline gives SPEAKER_n until someone names the speaker: "Speaker n". */
export const defaultLabel = (id: string) => id.replace(/^SPEAKER_(\d+)$/, "Speaker $1");

type Change = { at: number; before: SpeakerTurn; after: SpeakerTurn };

/** Where the speaker changes: midway between two turns of different speakers. */
function speakerChanges(turns: SpeakerTurn[]): Change[] {
  return turns.slice(1).flatMap((after, i) => {
    const before = turns[i]!;
    return after.speaker === before.speaker ? [] : [{ at: (before.end + after.start) / 2, before, after }];
  });
}

const overlap = (s: Unlabelled, t: SpeakerTurn) => Math.min(s.end, t.end) - Math.max(s.start, t.start);

/** The speaker of the turn overlapping [start, end] most; with no overlap, of the nearest turn. */
function speakerOf(turns: SpeakerTurn[], start: number, end: number): string {
  let best: { speaker: string; overlap: number; distance: number } | null = null;
  for (const t of turns) {
    const overlap = Math.min(end, t.end) - Math.max(start, t.start);
    const distance = Math.max(0, t.start - end, start - t.end);
    if (!best || overlap > best.overlap || (overlap <= 0 && best.overlap <= 0 && distance < best.distance)) best = { speaker: t.speaker, overlap, distance };
  }
  return best?.speaker ?? "SPEAKER_1";
}

/**
 * The segment cut at the word boundary nearest each speaker change inside it: between the
 * engine's timed words where it gave them (decision 186), else between words whose times are
 * estimated from their letters.
 */
function splitAtChanges(segment: Unlabelled, changes: Change[]): Unlabelled[] {
  const inside = changes.filter((c) => overlap(segment, c.before) >= MIN_PART_SECONDS && overlap(segment, c.after) >= MIN_PART_SECONDS).map((c) => c.at);
  const words = timedWords(segment);
  if (inside.length === 0 || words.length < 2) return [segment];
  // boundary(i): the time between word i-1 and word i.
  const boundary = (i: number) => (words[i - 1]!.end + words[i]!.start) / 2;
  const cuts = [
    ...new Set(
      inside.map((c) => {
        let nearest = 1;
        for (let i = 1; i < words.length; i++) if (Math.abs(boundary(i) - c) < Math.abs(boundary(nearest) - c)) nearest = i;
        return nearest;
      }),
    ),
  ].sort((a, b) => a - b);
  return [0, ...cuts].map((from, i) => sliceSegment(segment, from, [...cuts, words.length][i]!));
}

/** Neighbouring parts of one segment that went to the same speaker, joined again. */
function joinParts(parts: Segment[]): Segment[] {
  return parts.reduce<Segment[]>((out, p) => {
    const last = out.at(-1);
    if (last && last.speaker === p.speaker) out[out.length - 1] = joinSegments(last, p);
    else out.push(p);
    return out;
  }, []);
}

/**
 * Segments with the speaker of the turn each overlaps most, split where a turn changes
 * inside one; speakers renumbered in order of first appearance in the segments (then in
 * the turns), so SPEAKER_1 is the first one a reader meets.
 */
export function assignSpeakers(segments: Unlabelled[], turns: SpeakerTurn[]): { segments: Segment[]; turns: SpeakerTurn[] } {
  if (turns.length === 0) return { segments: segments.map((s) => ({ ...s, speaker: "SPEAKER_1" })), turns };
  const changes = speakerChanges(turns);
  const labelled = segments.flatMap((s) => joinParts(splitAtChanges(s, changes).map((p) => ({ ...p, speaker: speakerOf(turns, p.start, p.end) }))));
  const order = new Map<string, string>();
  for (const { speaker } of [...labelled, ...turns]) if (!order.has(speaker)) order.set(speaker, `SPEAKER_${order.size + 1}`);
  return { segments: labelled.map((s) => ({ ...s, speaker: order.get(s.speaker)! })), turns: turns.map((t) => ({ ...t, speaker: order.get(t.speaker)! })) };
}
