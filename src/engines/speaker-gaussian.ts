import { CEPSTRA } from "./speaker-features";

/**
 * Sufficient statistics of a full-covariance Gaussian over cepstral frames (count, sum,
 * sum of outer products), so stretches of speech merge by adding and compare by the
 * Bayesian information criterion (decision 097) without revisiting frames.
 */
export type GaussianStats = { n: number; sum: Float64Array; outer: Float64Array };

const D = CEPSTRA;
const PAIRS = (D * (D + 1)) / 2;
/** BIC's count of free parameters of one full-covariance Gaussian: mean plus covariance. */
export const GAUSSIAN_PARAMETERS = D + PAIRS;
/** Added to the covariance's diagonal: a stretch of a few frames still has a finite log-determinant. */
const FLOOR = 0.5;

export function emptyStats(): GaussianStats {
  return { n: 0, sum: new Float64Array(D), outer: new Float64Array(PAIRS) };
}

/** Adds frames `from` (inclusive) to `to` (exclusive) of a row-major frame array. */
export function addFrames(stats: GaussianStats, cepstra: Float32Array, from: number, to: number): GaussianStats {
  for (let f = from; f < to; f++) {
    const o = f * D;
    let p = 0;
    for (let i = 0; i < D; i++) {
      const xi = cepstra[o + i]!;
      stats.sum[i]! += xi;
      for (let j = i; j < D; j++) stats.outer[p++]! += xi * cepstra[o + j]!;
    }
  }
  stats.n += Math.max(0, to - from);
  return stats;
}

/** a + b (or a - b with sign -1) as new statistics. */
export function combine(a: GaussianStats, b: GaussianStats, sign: 1 | -1 = 1): GaussianStats {
  const out = emptyStats();
  out.n = a.n + sign * b.n;
  for (let i = 0; i < D; i++) out.sum[i] = a.sum[i]! + sign * b.sum[i]!;
  for (let p = 0; p < PAIRS; p++) out.outer[p] = a.outer[p]! + sign * b.outer[p]!;
  return out;
}

/** In place: a += b. */
export function accumulate(a: GaussianStats, b: GaussianStats): void {
  a.n += b.n;
  for (let i = 0; i < D; i++) a.sum[i]! += b.sum[i]!;
  for (let p = 0; p < PAIRS; p++) a.outer[p]! += b.outer[p]!;
}

/** log |covariance| by Cholesky, the covariance floored on its diagonal. */
export function logDeterminant(stats: GaussianStats): number {
  const n = Math.max(1, stats.n);
  const m = new Float64Array(D * D);
  let p = 0;
  for (let i = 0; i < D; i++) {
    for (let j = i; j < D; j++) {
      const c = stats.outer[p++]! / n - (stats.sum[i]! / n) * (stats.sum[j]! / n);
      m[i * D + j] = c;
      m[j * D + i] = c;
    }
    m[i * D + i]! += FLOOR;
  }
  let log = 0;
  for (let j = 0; j < D; j++) {
    let diag = m[j * D + j]!;
    for (let k = 0; k < j; k++) diag -= m[j * D + k]! ** 2;
    diag = Math.sqrt(Math.max(diag, 1e-12));
    m[j * D + j] = diag;
    log += 2 * Math.log(diag);
    for (let i = j + 1; i < D; i++) {
      let v = m[i * D + j]!;
      for (let k = 0; k < j; k++) v -= m[i * D + k]! * m[j * D + k]!;
      m[i * D + j] = v / diag;
    }
  }
  return log;
}

/**
 * ΔBIC of modelling a and b by one Gaussian instead of two: positive means two speakers are
 * the better explanation. `penalty` (λ) weighs the extra Gaussian's parameters.
 */
export function deltaBic(a: GaussianStats, b: GaussianStats, penalty: number, logDetA = logDeterminant(a), logDetB = logDeterminant(b)): number {
  const n = a.n + b.n;
  const joint = logDeterminant(combine(a, b));
  return 0.5 * (n * joint - a.n * logDetA - b.n * logDetB) - penalty * 0.5 * GAUSSIAN_PARAMETERS * Math.log(n);
}

/** The mean of the frames, for voiceprints. */
export function mean(stats: GaussianStats): Float64Array {
  return stats.sum.map((s) => s / Math.max(1, stats.n));
}
