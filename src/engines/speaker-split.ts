import type { Labelled } from "./speaker-resegment";
import { splitIfApart } from "./speaker-split-apart";

/**
 * The split test of decision 221: after relabelling, each cluster's whole turns compared by a
 * Gaussian mixture trained on the cluster's own frames (no outside weights), its means adapted
 * to each turn. Two close voices that the tied BIC joined (festival's `slt` at two pitches)
 * differ in the adapted means of like sounds; one voice's turns differ no more than the two
 * halves of one turn. All four constants chosen on the corpus' tuning half only.
 */
const COMPONENTS = 16;
/** EM rounds for the cluster's mixture, from evenly spaced frames. */
const ITERATIONS = 8;
/** MAP relevance: how many frames a component needs before its adapted mean is half the turn's (4 beat 8 and 16). */
const RELEVANCE = 4;
/** Only turns of at least this many voiced frames (1 s) are compared; shorter ones are too few frames to adapt 16 means. */
export const MIN_TURN = 100;
/** Keeps a component that the frames pull to a point from a zero variance. */
const VARIANCE_FLOOR = 0.05;

/** A diagonal-covariance Gaussian mixture: K weights, K×d means and variances. */
type Gmm = { k: number; d: number; weight: Float64Array; mean: Float64Array; variance: Float64Array };
/** Frames [from, to) of one stretch's row-major frames. */
type Span = { frames: Float32Array; from: number; to: number };
/** Per component: its soft count of the frames and the frames' sum weighted by it. */
type ComponentStats = { n: Float64Array; first: Float64Array };

/** Each component's log weight less half its log |Σ|: the frame-independent part of its log-likelihood. */
function logConstants(g: Gmm): Float64Array {
  return g.weight.map((w, k) => {
    let logDet = 0;
    for (let i = 0; i < g.d; i++) logDet += Math.log(g.variance[k * g.d + i]!);
    return Math.log(Math.max(w, 1e-12)) - 0.5 * logDet;
  });
}

/** Every frame's posteriors over the components, handed to `use` (frames, offset, posteriors). */
function eachPosterior(g: Gmm, spans: Span[], use: (frames: Float32Array, offset: number, post: Float64Array) => void): void {
  const logConst = logConstants(g);
  const post = new Float64Array(g.k);
  for (const { frames, from, to } of spans)
    for (let f = from; f < to; f++) {
      const o = f * g.d;
      let max = Number.NEGATIVE_INFINITY;
      for (let k = 0; k < g.k; k++) {
        let q = 0;
        for (let i = 0; i < g.d; i++) q += (frames[o + i]! - g.mean[k * g.d + i]!) ** 2 / g.variance[k * g.d + i]!;
        post[k] = logConst[k]! - 0.5 * q;
        if (post[k]! > max) max = post[k]!;
      }
      let sum = 0;
      for (let k = 0; k < g.k; k++) sum += post[k] = Math.exp(post[k]! - max);
      for (let k = 0; k < g.k; k++) post[k]! /= sum;
      use(frames, o, post);
    }
}

function componentStats(g: Gmm, spans: Span[]): ComponentStats {
  const s = { n: new Float64Array(g.k), first: new Float64Array(g.k * g.d) };
  eachPosterior(g, spans, (frames, o, post) => {
    for (let k = 0; k < g.k; k++) {
      s.n[k]! += post[k]!;
      for (let i = 0; i < g.d; i++) s.first[k * g.d + i]! += post[k]! * frames[o + i]!;
    }
  });
  return s;
}

const add = (a: ComponentStats, b: ComponentStats): ComponentStats => ({ n: a.n.map((v, i) => v + b.n[i]!), first: a.first.map((v, i) => v + b.first[i]!) });

/** A K-component diagonal mixture trained by EM on the spans' frames, started from evenly spaced frames with the frames' own variance. */
function trainGmm(spans: Span[], d: number): Gmm {
  const k = COMPONENTS;
  const count = spans.reduce((n, s) => n + s.to - s.from, 0);
  const g: Gmm = { k, d, weight: new Float64Array(k).fill(1 / k), mean: new Float64Array(k * d), variance: new Float64Array(k * d) };
  const [total, square] = [new Float64Array(d), new Float64Array(d)];
  for (const { frames, from, to } of spans)
    for (let f = from; f < to; f++)
      for (let i = 0; i < d; i++) {
        total[i]! += frames[f * d + i]!;
        square[i]! += frames[f * d + i]! ** 2;
      }
  const frameAt = (index: number): [Float32Array, number] => {
    for (const { frames, from, to } of spans) {
      if (index < to - from) return [frames, (from + index) * d];
      index -= to - from;
    }
    throw new Error("frame index out of range");
  };
  for (let c = 0; c < k; c++) {
    const [frames, o] = frameAt(Math.floor(((c + 0.5) * count) / k));
    for (let i = 0; i < d; i++) {
      g.mean[c * d + i] = frames[o + i]!;
      g.variance[c * d + i] = Math.max(square[i]! / count - (total[i]! / count) ** 2, VARIANCE_FLOOR);
    }
  }
  for (let it = 0; it < ITERATIONS; it++) {
    const [n, first, second] = [new Float64Array(k), new Float64Array(k * d), new Float64Array(k * d)];
    eachPosterior(g, spans, (frames, o, post) => {
      for (let c = 0; c < k; c++) {
        n[c]! += post[c]!;
        for (let i = 0; i < d; i++) {
          const x = frames[o + i]!;
          first[c * d + i]! += post[c]! * x;
          second[c * d + i]! += post[c]! * x * x;
        }
      }
    });
    for (let c = 0; c < k; c++) {
      if (n[c]! < 1) continue; // a component no frame chose keeps its place
      g.weight[c] = n[c]! / count;
      for (let i = 0; i < d; i++) {
        const m = first[c * d + i]! / n[c]!;
        g.mean[c * d + i] = m;
        g.variance[c * d + i] = Math.max(second[c * d + i]! / n[c]! - m * m, VARIANCE_FLOOR);
      }
    }
  }
  return g;
}

/** The mixture's means adapted to the statistics (MAP). */
function adapted(g: Gmm, s: ComponentStats): Float64Array {
  return g.mean.map((m, p) => (s.first[p]! + RELEVANCE * m) / (s.n[Math.floor(p / g.d)]! + RELEVANCE));
}

/** The squared distance between two sets of adapted means, each component by its weight, each feature by its variance. */
function distance(g: Gmm, a: Float64Array, b: Float64Array): number {
  let sum = 0;
  for (let p = 0; p < a.length; p++) sum += (g.weight[Math.floor(p / g.d)]! * (a[p]! - b[p]!) ** 2) / g.variance[p]!;
  return sum;
}

/** The cluster's runs within each stretch of at least MIN_TURN frames, with the stretch they lie in. */
export function wholeTurns(stretches: Labelled[], cluster: number): (Span & { stretch: number })[] {
  const out: (Span & { stretch: number })[] = [];
  stretches.forEach((s, stretch) => {
    for (let a = 0; a < s.count; ) {
      let b = a + 1;
      while (b < s.count && s.labels[b] === s.labels[a]) b++;
      if (s.labels[a] === cluster && b - a >= MIN_TURN) out.push({ frames: s.frames, from: a, to: b, stretch });
      a = b;
    }
  });
  return out;
}

/** Two groups of the vectors by 2-means from their farthest pair: each vector's side (0 or 1). */
function parted(g: Gmm, stats: ComponentStats[], vectors: Float64Array[]): number[] {
  let [p, q, far] = [0, 1, -1];
  for (let i = 0; i < vectors.length; i++)
    for (let j = i + 1; j < vectors.length; j++) {
      const d = distance(g, vectors[i]!, vectors[j]!);
      if (d > far) [p, q, far] = [i, j, d];
    }
  let centres = [vectors[p]!, vectors[q]!];
  let side: number[] = [];
  for (let round = 0; round < 10; round++) {
    const again = vectors.map((v) => (distance(g, v, centres[0]!) <= distance(g, v, centres[1]!) ? 0 : 1));
    if (!again.includes(0) || !again.includes(1) || again.every((s, i) => s === side[i])) break;
    side = again;
    centres = [0, 1].map((k) => adapted(g, stats.filter((_, i) => side[i] === k).reduce(add)));
  }
  return side;
}

/**
 * The split test, in place on the frame labels: for each cluster with two or more whole turns,
 * the mean distance between its turns' adapted means over the mean distance between each turn's
 * two halves (one voice, as many frames). Above `threshold` the turns are parted in two by
 * 2-means and the second group becomes a new cluster, if the two parts lie at least `apart`
 * apart (speaker-split-apart.ts) and while there are fewer than `most` clusters (the count
 * hint's maximum). Returns each tested cluster's ratio.
 */
export function splitClusters(
  stretches: Labelled[],
  threshold: number,
  most = Number.POSITIVE_INFINITY,
  apart = 0,
): { cluster: number; ratio: number; split: boolean }[] {
  const d = stretches[0]?.d ?? 0;
  const clusters = [...new Set(stretches.flatMap((s) => [...s.labels]))].filter((c) => c >= 0).sort((a, b) => a - b);
  let fresh = (clusters.at(-1) ?? -1) + 1;
  let count = clusters.length;
  const out: { cluster: number; ratio: number; split: boolean }[] = [];
  for (const cluster of clusters) {
    const turns = wholeTurns(stretches, cluster);
    if (turns.length < 2) continue;
    const g = trainGmm(turns, d);
    const halves = turns.map((t) => {
      const middle = (t.from + t.to) >> 1;
      return [componentStats(g, [{ ...t, to: middle }]), componentStats(g, [{ ...t, from: middle }])] as const;
    });
    const stats = halves.map(([a, b]) => add(a, b));
    const vectors = stats.map((s) => adapted(g, s));
    let between = 0;
    for (let i = 0; i < vectors.length; i++) for (let j = i + 1; j < vectors.length; j++) between += distance(g, vectors[i]!, vectors[j]!);
    between /= (vectors.length * (vectors.length - 1)) / 2;
    const within = halves.reduce((sum, [a, b]) => sum + distance(g, adapted(g, a), adapted(g, b)), 0) / halves.length;
    const ratio = between / within;
    const secondGroup = () => {
      const side = parted(g, stats, vectors);
      return turns.filter((_, i) => side[i] === 1);
    };
    const split = ratio > threshold && count < most && splitIfApart(stretches, cluster, fresh, secondGroup(), apart);
    out.push({ cluster, ratio, split });
    if (split) [fresh, count] = [fresh + 1, count + 1];
  }
  return out;
}
