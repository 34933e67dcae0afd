import { addFrames, covarianceCholesky, emptyStats, type GaussianStats } from "./speaker-gaussian";

/** A cluster's Gaussian ready to score frames: its mean, the Cholesky factor of its covariance and log |Σ|. */
type Scorer = { mean: Float64Array; chol: Float64Array; logDet: number };

function scorer(stats: GaussianStats): Scorer {
  const n = Math.max(1, stats.n);
  return { mean: stats.sum.map((s) => s / n), ...covarianceCholesky(stats) };
}

/** log N(x; μ, Σ) up to a constant, by forward substitution through the Cholesky factor. */
function logLikelihood(s: Scorer, frames: Float32Array, offset: number, y: Float64Array): number {
  const D = s.mean.length;
  let q = 0;
  for (let i = 0; i < D; i++) {
    let v = frames[offset + i]! - s.mean[i]!;
    for (let k = 0; k < i; k++) v -= s.chol[i * D + k]! * y[k]!;
    y[i] = v / s.chol[i * D + i]!;
    q += y[i]! * y[i]!;
  }
  return -0.5 * (q + s.logDet);
}

/**
 * Each frame of one stretch given to a cluster by Viterbi over the clusters' Gaussians, a
 * change of speaker costing `switchCost` (log-likelihood): clustering decides who speaks,
 * this decides where the turns change, frame by frame instead of at the change detector's
 * 0.1 s blocks and 3 s piece cuts, which miss turns shorter than a window (decision 178).
 */
export function viterbi(frames: Float32Array, d: number, count: number, scorers: Scorer[], switchCost: number): Int32Array {
  const K = scorers.length;
  const back = new Int32Array(count * K);
  let score = new Float64Array(K);
  let next = new Float64Array(K);
  const y = new Float64Array(d);
  for (let f = 0; f < count; f++) {
    let best = 0;
    for (let k = 1; k < K; k++) if (score[k]! > score[best]!) best = k;
    for (let k = 0; k < K; k++) {
      const stay = score[k]!;
      const move = score[best]! - switchCost;
      const from = stay >= move ? k : best;
      back[f * K + k] = from;
      next[k] = Math.max(stay, move) + logLikelihood(scorers[k]!, frames, f * d, y);
    }
    [score, next] = [next, score];
  }
  const labels = new Int32Array(count);
  let k = 0;
  for (let j = 1; j < K; j++) if (score[j]! > score[k]!) k = j;
  for (let f = count - 1; f >= 0; f--) {
    labels[f] = k;
    k = back[f * K + k]!;
  }
  return labels;
}

/** The frames of each stretch, and the cluster each frame was given (-1: none yet). */
export type Labelled = { frames: Float32Array; d: number; count: number; labels: Int32Array };

/**
 * Frame labels re-estimated `rounds` times: each cluster's Gaussian from the frames it holds,
 * then every stretch relabelled by Viterbi. Clusters that lose all their frames drop out.
 */
export function resegment(stretches: Labelled[], switchCost: number, rounds: number): void {
  const d = stretches[0]?.d ?? 0;
  for (let r = 0; r < rounds; r++) {
    const byCluster = new Map<number, GaussianStats>();
    for (const s of stretches)
      for (let f = 0; f < s.count; f++) {
        const c = s.labels[f]!;
        if (c < 0) continue;
        if (!byCluster.has(c)) byCluster.set(c, emptyStats(d));
        addFrames(byCluster.get(c)!, s.frames, f, f + 1);
      }
    const ids = [...byCluster.keys()];
    if (ids.length < 2) return;
    const scorers = ids.map((c) => scorer(byCluster.get(c)!));
    for (const s of stretches) {
      const path = viterbi(s.frames, d, s.count, scorers, switchCost);
      for (let f = 0; f < s.count; f++) s.labels[f] = ids[path[f]!]!;
    }
  }
}
