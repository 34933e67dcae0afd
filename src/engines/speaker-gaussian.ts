/**
 * Sufficient statistics of a full-covariance Gaussian over cepstral frames (count, sum,
 * sum of outer products), so stretches of speech merge by adding and compare by the
 * Bayesian information criterion (decision 097) without revisiting frames.
 */
export type GaussianStats = { d: number; n: number; sum: Float64Array; outer: Float64Array };

const pairs = (d: number) => (d * (d + 1)) / 2;
/** BIC's count of free parameters of one full-covariance Gaussian in d dimensions: mean plus covariance. */
export const gaussianParameters = (d: number) => d + pairs(d);
/** Added to the covariance's diagonal: a stretch of a few frames still has a finite log-determinant. */
const FLOOR = 0.5;

export function emptyStats(d: number): GaussianStats {
  return { d, n: 0, sum: new Float64Array(d), outer: new Float64Array(pairs(d)) };
}

/** Adds frames `from` (inclusive) to `to` (exclusive) of a row-major frame array. */
export function addFrames(stats: GaussianStats, cepstra: Float32Array, from: number, to: number): GaussianStats {
  const D = stats.d;
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
  const out = emptyStats(a.d);
  out.n = a.n + sign * b.n;
  for (let i = 0; i < a.d; i++) out.sum[i] = a.sum[i]! + sign * b.sum[i]!;
  for (let p = 0; p < out.outer.length; p++) out.outer[p] = a.outer[p]! + sign * b.outer[p]!;
  return out;
}

/** In place: a += b. */
export function accumulate(a: GaussianStats, b: GaussianStats): void {
  a.n += b.n;
  for (let i = 0; i < a.d; i++) a.sum[i]! += b.sum[i]!;
  for (let p = 0; p < a.outer.length; p++) a.outer[p]! += b.outer[p]!;
}

/**
 * The covariance's Cholesky factor (row-major, lower triangle) and log |covariance|, the
 * covariance floored on its diagonal; into `m` (D² values) if given.
 */
export function covarianceCholesky(stats: GaussianStats, m = new Float64Array(stats.d * stats.d)): { chol: Float64Array; logDet: number } {
  const D = stats.d;
  const n = Math.max(1, stats.n);
  let p = 0;
  for (let i = 0; i < D; i++) {
    for (let j = i; j < D; j++) {
      const c = stats.outer[p++]! / n - (stats.sum[i]! / n) * (stats.sum[j]! / n);
      m[i * D + j] = c;
      m[j * D + i] = c;
    }
    m[i * D + i]! += FLOOR;
  }
  let logDet = 0;
  for (let j = 0; j < D; j++) {
    let diag = m[j * D + j]!;
    for (let k = 0; k < j; k++) diag -= m[j * D + k]! ** 2;
    diag = Math.sqrt(Math.max(diag, 1e-12));
    m[j * D + j] = diag;
    logDet += 2 * Math.log(diag);
    for (let i = j + 1; i < D; i++) {
      let v = m[i * D + j]!;
      for (let k = 0; k < j; k++) v -= m[i * D + k]! * m[j * D + k]!;
      m[i * D + j] = v / diag;
    }
  }
  return { chol: m, logDet };
}

/** Work space for logDeterminant, which the clustering calls for every pair of clusters after every merge. */
let scratch = new Float64Array(0);

/** log |covariance| by Cholesky, the covariance floored on its diagonal. */
export function logDeterminant(stats: GaussianStats): number {
  if (scratch.length < stats.d * stats.d) scratch = new Float64Array(stats.d * stats.d);
  return covarianceCholesky(stats, scratch).logDet;
}

/**
 * ΔBIC of modelling a and b by one Gaussian instead of two: positive means two speakers are
 * the better explanation. `penalty` (λ) weighs the extra Gaussian's parameters.
 */
export function deltaBic(a: GaussianStats, b: GaussianStats, penalty: number, logDetA = logDeterminant(a), logDetB = logDeterminant(b)): number {
  const n = a.n + b.n;
  const joint = logDeterminant(combine(a, b));
  return 0.5 * (n * joint - a.n * logDetA - b.n * logDetB) - penalty * 0.5 * gaussianParameters(a.d) * Math.log(n);
}

/** The mean of the frames, for voiceprints. */
export function mean(stats: GaussianStats): Float64Array {
  return stats.sum.map((s) => s / Math.max(1, stats.n));
}

/** Statistics scaled to one frame: the mean and second moment, so long and short stretches weigh alike. */
export function perFrame(stats: GaussianStats): GaussianStats {
  const out = emptyStats(stats.d);
  out.n = 1;
  stats.sum.forEach((v, i) => (out.sum[i] = v / Math.max(1, stats.n)));
  stats.outer.forEach((v, i) => (out.outer[i] = v / Math.max(1, stats.n)));
  return out;
}

/**
 * How far apart two Gaussians are, per frame and whatever their durations: half the log
 * determinant of their equal mixture less the mean of their own, d = ½(log|Σ½a+½b| −
 * ½log|Σa| − ½log|Σb|); 0 for one voice, growing as the voices differ (decision 098's
 * voiceprint distance).
 */
export function divergence(a: GaussianStats, b: GaussianStats): number {
  const [pa, pb] = [perFrame(a), perFrame(b)];
  return 0.5 * (logDeterminant(combine(pa, pb)) - 0.5 * logDeterminant(pa) - 0.5 * logDeterminant(pb));
}

/** The scatter of the frames about their own mean (n, zero sum, Σ(x-μ)(x-μ)ᵀ): adding two gives their pooled within-covariance. */
export function centred(stats: GaussianStats): GaussianStats {
  const out = emptyStats(stats.d);
  out.n = stats.n;
  const n = Math.max(1, stats.n);
  let p = 0;
  for (let i = 0; i < stats.d; i++) for (let j = i; j < stats.d; j++) out.outer[p] = stats.outer[p++]! - (stats.sum[i]! * stats.sum[j]!) / n;
  return out;
}

/**
 * ΔBIC of one Gaussian against two that share one covariance (only the means differ): the
 * penalty weighs d parameters, not d + d(d+1)/2, so short stretches of voices that differ
 * mainly in their mean (pitch, timbre) are no longer joined for want of frames (decision 178).
 */
export function tiedDeltaBic(a: GaussianStats, b: GaussianStats, penalty: number, centredA = centred(a), centredB = centred(b)): number {
  const n = a.n + b.n;
  const within = combine(centredA, centredB);
  return 0.5 * n * (logDeterminant(combine(a, b)) - logDeterminant(within)) - penalty * 0.5 * a.d * Math.log(n);
}

/** The λ at which `tiedDeltaBic` of a and b is 0: under a larger one they are better joined (decision 195's "critical λ"). */
export function criticalPenalty(a: GaussianStats, b: GaussianStats): number {
  return tiedDeltaBic(a, b, 0) / (0.5 * a.d * Math.log(a.n + b.n));
}
