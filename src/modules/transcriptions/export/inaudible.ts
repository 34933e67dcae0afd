import type { Segment } from "../schema";

/** 3725.5 s -> "01:02:05". */
export function clockTime(seconds: number): string {
  const s = Math.floor(seconds);
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${pad(Math.floor(s / 3600))}:${pad(Math.floor(s / 60) % 60)}:${pad(s % 60)}`;
}

/**
 * A segment's words as an export shows them: `[inaudible hh:mm:ss]` (its start) when the
 * recogniser's confidence in it is below `threshold` (0 marks nothing). Whisper scores
 * segments, not words, so a whole segment is marked (decision 156).
 */
export const markInaudible =
  (threshold: number) =>
  (s: Segment): string =>
    s.confidence < threshold ? `[inaudible ${clockTime(s.start)}]` : s.text;
