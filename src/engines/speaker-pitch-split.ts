import type { Labelled } from "./speaker-resegment";
import { wholeTurns } from "./speaker-split";
import { splitIfApart } from "./speaker-split-apart";

/**
 * The pitch test of decision 223, after the split test of decision 221: prosody measured per
 * turn, with the turn (not the frame) as the sample, since frames 10 ms apart are not independent
 * evidence. Two voices whose cepstra the tied BIC and the mixture could not tell apart, but whose
 * pitch sits at two levels, show it as a cluster whose whole turns fall into two groups of pitch
 * further apart than one turn's two halves usually are in the same recording.
 */

/** A turn's pitch level: the mean of its middle half of frames, which octave errors and glides at the edges do not move. */
function level(frames: Float32Array, d: number, at: number, from: number, to: number): number {
  const values = Float64Array.from({ length: to - from }, (_, i) => frames[(from + i) * d + at]!).sort();
  const [lo, hi] = [Math.floor(values.length / 4), Math.max(Math.floor(values.length / 4) + 1, Math.ceil((3 * values.length) / 4))];
  let sum = 0;
  for (let i = lo; i < hi; i++) sum += values[i]!;
  return sum / (hi - lo);
}

/** The cut of sorted levels into a lower and an upper group that is furthest apart for its sizes (Otsu): where the upper group starts, and the gap between the groups' means. */
function bestCut(sorted: number[]): { at: number; gap: number } {
  let best = { at: 0, gap: 0, score: -1 };
  for (let k = 1; k < sorted.length; k++) {
    const lower = sorted.slice(0, k).reduce((s, v) => s + v, 0) / k;
    const upper = sorted.slice(k).reduce((s, v) => s + v, 0) / (sorted.length - k);
    const score = k * (sorted.length - k) * (upper - lower) ** 2;
    if (score > best.score) best = { at: k, gap: upper - lower, score };
  }
  return best;
}

/**
 * The pitch test, in place on the frame labels. `pitch` is the feature that holds log pitch.
 * For each cluster with two or more whole turns: the gap between the two groups its turns' pitch
 * levels part into best, over the recording's mean difference between the levels of a whole
 * turn's two halves (every cluster's turns: how much one voice's pitch level wanders here).
 * Above `threshold`, the upper group's turns become a new cluster, if the two parts lie at
 * least `apart` apart (speaker-split-apart.ts) and while there are fewer than `most` clusters
 * (the count hint's maximum). Returns each tested cluster's ratio.
 */
export function splitByPitch(
  stretches: Labelled[],
  pitch: number,
  threshold: number,
  most = Number.POSITIVE_INFINITY,
  apart = 0,
): { cluster: number; ratio: number; split: boolean }[] {
  const d = stretches[0]?.d ?? 0;
  const clusters = [...new Set(stretches.flatMap((s) => [...s.labels]))].filter((c) => c >= 0).sort((a, b) => a - b);
  const turns = clusters.map((cluster) =>
    wholeTurns(stretches, cluster).map((t) => {
      const middle = (t.from + t.to) >> 1;
      return {
        ...t,
        level: level(t.frames, d, pitch, t.from, t.to),
        halves: Math.abs(level(t.frames, d, pitch, t.from, middle) - level(t.frames, d, pitch, middle, t.to)),
      };
    }),
  );
  const all = turns.flat();
  const wander = all.reduce((s, t) => s + t.halves, 0) / Math.max(1, all.length);
  // A voice whose pitch never wanders gives nothing to measure a gap against.
  if (!(wander > 0)) return [];
  let fresh = (clusters.at(-1) ?? -1) + 1;
  let count = clusters.length;
  const out: { cluster: number; ratio: number; split: boolean }[] = [];
  clusters.forEach((cluster, c) => {
    const own = turns[c]!;
    if (own.length < 2) return;
    const sorted = own.map((t) => t.level).sort((a, b) => a - b);
    const { at, gap } = bestCut(sorted);
    const ratio = gap / wander;
    const upper = own.filter((t) => t.level >= sorted[at]!);
    const split = ratio > threshold && count < most && splitIfApart(stretches, cluster, fresh, upper, apart);
    out.push({ cluster, ratio, split });
    if (split) [fresh, count] = [fresh + 1, count + 1];
  });
  return out;
}
