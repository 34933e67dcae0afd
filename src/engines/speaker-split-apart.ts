import { addFrames, criticalPenalty, emptyStats, type GaussianStats } from "./speaker-gaussian";
import type { Labelled } from "./speaker-resegment";

/** Every stretch's frame labels, copied: what a split test's parts are compared against. */
export const labelsOf = (stretches: Labelled[]): Int32Array[] => stretches.map((s) => s.labels.slice());

/**
 * The split tests (decisions 221, 223) part a cluster's turns into the two groups that look
 * most like two voices, so one voice whose turns differ in what is said is parted too. The
 * clustering's own measure then tells the cases apart (decision 238): on the corpus' tuning
 * halves, 15 of 18 two-voice splits had parts at a critical λ of 2.3 or more, and 5 of 6
 * one-voice splits under 1.35. Each split since `before` (a new
 * label carved out of one cluster) whose two parts lie closer than `apart` is undone, in place.
 * Returns whether any split stands.
 */
export function undoCloseSplits(stretches: Labelled[], before: Int32Array[], apart: number): boolean {
  const d = stretches[0]?.d ?? 0;
  // A split carves one new label out of one cluster: keyed by the new label.
  const splits = new Map<number, { from: number; kept: GaussianStats; parted: GaussianStats }>();
  stretches.forEach((s, i) => {
    for (let f = 0; f < s.count; f++) {
      const [now, was] = [s.labels[f]!, before[i]![f]!];
      if (now === was) continue;
      const split = splits.get(now) ?? splits.set(now, { from: was, kept: emptyStats(d), parted: emptyStats(d) }).get(now)!;
      addFrames(split.parted, s.frames, f, f + 1);
    }
  });
  const byOrigin = new Map([...splits.values()].map((split) => [split.from, split]));
  stretches.forEach((s, i) => {
    for (let f = 0; f < s.count; f++) {
      const split = s.labels[f] === before[i]![f] ? byOrigin.get(s.labels[f]!) : undefined;
      if (split) addFrames(split.kept, s.frames, f, f + 1);
    }
  });
  let stands = false;
  for (const [label, split] of splits) {
    if (split.kept.n > 0 && criticalPenalty(split.kept, split.parted) >= apart) {
      stands = true;
      continue;
    }
    for (const s of stretches) for (let f = 0; f < s.count; f++) if (s.labels[f] === label) s.labels[f] = split.from;
  }
  return stands;
}
