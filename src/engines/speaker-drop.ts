import { type Labelled, resegment } from "./speaker-resegment";

/**
 * The clusters with fewer than `least` frames in all, smallest first, while more than `keep`
 * clusters are left: their labels cleared so that relabelling gives their frames to the others.
 * Returns the clusters dropped.
 */
export function dropSmallClusters(stretches: Labelled[], least: number, keep: number): number[] {
  const sizes = new Map<number, number>();
  for (const s of stretches) for (let f = 0; f < s.count; f++) if (s.labels[f]! >= 0) sizes.set(s.labels[f]!, (sizes.get(s.labels[f]!) ?? 0) + 1);
  const dropped: number[] = [];
  for (const [cluster, size] of [...sizes].sort((a, b) => a[1] - b[1])) {
    if (size >= least || sizes.size - dropped.length <= keep) break;
    dropped.push(cluster);
  }
  return dropped;
}

/** Drops the small clusters (dropSmallClusters) and relabels every frame among the rest. */
export function absorbSmallClusters(stretches: Labelled[], least: number, keep: number, switchCost: number, rounds: number): boolean {
  const dropped = new Set(dropSmallClusters(stretches, least, keep));
  if (dropped.size === 0) return false;
  for (const s of stretches) for (let f = 0; f < s.count; f++) if (dropped.has(s.labels[f]!)) s.labels[f] = -1;
  const left = [...new Set(stretches.flatMap((s) => [...s.labels]))].filter((c) => c >= 0);
  if (left.length === 1) for (const s of stretches) s.labels.fill(left[0]!);
  else resegment(stretches, switchCost, rounds);
  return true;
}
