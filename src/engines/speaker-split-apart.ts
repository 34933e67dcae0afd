import { addFrames, criticalPenalty, emptyStats } from "./speaker-gaussian";
import type { Labelled } from "./speaker-resegment";

/** Runs of frames [from, to) of one stretch. */
type Run = { stretch: number; from: number; to: number };

/**
 * The split tests (decisions 221, 223) part a cluster's turns into the two groups that look
 * most like two voices, so one voice whose turns differ in what is said is parted too. The
 * clustering's own measure then tells the cases apart (decision 238): on the corpus' tuning
 * halves, 15 of 18 two-voice splits had parts at a critical λ of 2.3 or more, and 5 of 6
 * one-voice splits under 1.35. `moved` (runs of `cluster`) becomes `label`, in place, and stays
 * so only if the two parts lie at least `apart` apart. Returns whether the split stands.
 */
export function splitIfApart(stretches: Labelled[], cluster: number, label: number, moved: Run[], apart: number): boolean {
  const relabel = (to: number) => {
    for (const run of moved) stretches[run.stretch]!.labels.fill(to, run.from, run.to);
  };
  relabel(label);
  const d = stretches[0]?.d ?? 0;
  const [kept, parted] = [emptyStats(d), emptyStats(d)];
  for (const s of stretches)
    for (let f = 0; f < s.count; f++) {
      if (s.labels[f] === cluster) addFrames(kept, s.frames, f, f + 1);
      else if (s.labels[f] === label) addFrames(parted, s.frames, f, f + 1);
    }
  if (kept.n > 0 && parted.n > 0 && criticalPenalty(kept, parted) >= apart) return true;
  relabel(cluster);
  return false;
}
