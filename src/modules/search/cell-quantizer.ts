/**
 * The cell quantizer of a large library's vector index (decisions 192, 204): pure arithmetic
 * on unit vectors, no SQL. Two levels, so assigning a million vectors stays cheap: a
 * vector's cell is the nearest of the fine centroids under its nearest coarse centroid,
 * about 2 x sqrt(cells) dot products instead of one per cell. Each coarse centroid has as
 * many fine ones as its share of the library calls for (decision 204), so cells hold about
 * as many chunks each and a probe's cost is bounded. A query compares itself with every
 * cell's centroid (a few hundred thousand multiplications) and scans the nearest cells.
 */
export type Quantizer = {
  dimension: number;
  /** coarseCount x dimension, unit length. */
  coarse: Float32Array;
  /** The cells under coarse centroid c are firstCell[c] to firstCell[c + 1] - 1 (coarseCount + 1 entries). */
  firstCell: Uint32Array;
  /** cellCount x dimension: cell c's centroid at c x dimension. */
  fine: Float32Array;
};

export const coarseCount = (q: Quantizer) => q.firstCell.length - 1;
export const cellCount = (q: Quantizer) => q.firstCell[coarseCount(q)]!;

/** Cells under each coarse centroid, in order (what the index row stores). */
export const fineCounts = (q: Quantizer) => Uint32Array.from({ length: coarseCount(q) }, (_, c) => q.firstCell[c + 1]! - q.firstCell[c]!);

/** The firstCell offsets of these per-coarse cell counts. */
export function firstCells(counts: ArrayLike<number>): Uint32Array {
  const first = new Uint32Array(counts.length + 1);
  for (let c = 0; c < counts.length; c++) first[c + 1] = first[c]! + counts[c]!;
  return first;
}

/** Coarse centroids and cells for a library: about `chunksPerCell` chunks a cell, sqrt(cells) coarse centroids. */
export function quantizerShape(chunks: number, chunksPerCell: number): { coarseCount: number; cells: number } {
  const side = Math.max(2, Math.ceil(Math.sqrt(chunks / chunksPerCell)));
  return { coarseCount: side, cells: side * side };
}

function dot(a: Float32Array, ao: number, b: Float32Array, bo: number, d: number): number {
  let s = 0;
  for (let i = 0; i < d; i++) s += a[ao + i]! * b[bo + i]!;
  return s;
}

/** Index of the centroid (of `count`, starting at `first`) with the largest dot product with v. */
function nearest(centroids: Float32Array, first: number, count: number, v: Float32Array, vo: number, d: number): number {
  let best = 0;
  let bestScore = -Infinity;
  for (let c = 0; c < count; c++) {
    const s = dot(centroids, (first + c) * d, v, vo, d);
    if (s > bestScore) [best, bestScore] = [c, s];
  }
  return best;
}

/** The cell of a unit vector (`vo`: its offset in `v`). */
export function cellOf(q: Quantizer, v: Float32Array, vo = 0): number {
  const c = nearest(q.coarse, 0, coarseCount(q), v, vo, q.dimension);
  const first = q.firstCell[c]!;
  return first + nearest(q.fine, first, q.firstCell[c + 1]! - first, v, vo, q.dimension);
}

/** The `probes` cells whose centroids are nearest the query, nearest first. */
export function nearestCells(q: Quantizer, query: Float32Array, probes: number): number[] {
  const scores = Array.from({ length: cellCount(q) }, (_, c) => ({ c, s: dot(q.fine, c * q.dimension, query, 0, q.dimension) }));
  return scores
    .sort((a, b) => b.s - a.s)
    .slice(0, probes)
    .map((x) => x.c);
}

function normalise(v: Float32Array, o: number, d: number): void {
  let sum = 0;
  for (let i = 0; i < d; i++) sum += v[o + i]! * v[o + i]!;
  const norm = Math.sqrt(sum) || 1;
  for (let i = 0; i < d; i++) v[o + i]! /= norm;
}

/**
 * Spherical k-means (dot-product assignment, centroids renormalised) of `rows` (offsets
 * into `data`, each `d` long) into k centroids; seeded with k distinct rows, an emptied
 * cluster reseeded with a random row. A handful of Lloyd rounds: cells only need to keep
 * neighbours together, not to converge.
 */
function kmeans(data: Float32Array, rows: number[], k: number, d: number, rounds: number, rand: () => number): Float32Array {
  const centroids = new Float32Array(k * d);
  const shuffled = [...rows].sort(() => rand() - 0.5);
  for (let c = 0; c < k; c++) centroids.set(data.subarray(shuffled[c % shuffled.length]! * d, shuffled[c % shuffled.length]! * d + d), c * d);
  for (let round = 0; round < rounds; round++) {
    const sums = new Float32Array(k * d);
    const sizes = new Uint32Array(k);
    for (const r of rows) {
      const c = nearest(centroids, 0, k, data, r * d, d);
      sizes[c]!++;
      for (let i = 0; i < d; i++) sums[c * d + i]! += data[r * d + i]!;
    }
    for (let c = 0; c < k; c++) {
      if (sizes[c] === 0) {
        const r = rows[Math.floor(rand() * rows.length)]!;
        sums.set(data.subarray(r * d, r * d + d), c * d);
      }
      normalise(sums, c * d, d);
    }
    centroids.set(sums);
  }
  return centroids;
}

/**
 * Splits `total` cells among clusters of these sizes in proportion to them (largest
 * remainders), at least one each and no more than a cluster's size (a cell per sampled
 * member at most: more would only repeat centroids and stay empty).
 */
export function apportion(sizes: number[], total: number): number[] {
  const all = sizes.reduce((a, b) => a + b, 0);
  const quota = sizes.map((n) => (all > 0 ? (total * n) / all : 0));
  const counts = quota.map((q, c) => Math.max(1, Math.min(sizes[c]!, Math.floor(q))));
  const byRemainder = quota.map((_, c) => c).sort((a, b) => quota[b]! - counts[b]! - (quota[a]! - counts[a]!));
  let left = total - counts.reduce((a, b) => a + b, 0);
  for (const c of byRemainder) {
    if (left <= 0) break;
    if (counts[c]! < sizes[c]!) [counts[c], left] = [counts[c]! + 1, left - 1];
  }
  return counts;
}

const TRAINING_ROUNDS = 8;

/**
 * Trains a quantizer on `sample` (n x dimension unit vectors, flat): the coarse centroids
 * on the whole sample, then each coarse cluster's fine centroids on its own members, as
 * many as its share of the sample's cells (a sample is drawn uniformly, so its shares are
 * the library's). `pause` runs between steps so a server's event loop is not held for the
 * whole training.
 */
export async function trainQuantizer(
  sample: Float32Array,
  dimension: number,
  shape: { coarseCount: number; cells: number },
  rand: () => number,
  pause: () => Promise<void>,
): Promise<Quantizer> {
  const d = dimension;
  const n = sample.length / d;
  const all = Array.from({ length: n }, (_, i) => i);
  const coarse = kmeans(sample, all, shape.coarseCount, d, TRAINING_ROUNDS, rand);
  const members: number[][] = Array.from({ length: shape.coarseCount }, () => []);
  for (const r of all) members[nearest(coarse, 0, shape.coarseCount, sample, r * d, d)]!.push(r);
  const firstCell = firstCells(
    apportion(
      members.map((m) => m.length),
      shape.cells,
    ),
  );
  const fine = new Float32Array(firstCell[shape.coarseCount]! * d);
  for (let c = 0; c < shape.coarseCount; c++) {
    await pause();
    const count = firstCell[c + 1]! - firstCell[c]!;
    // An empty coarse cluster (possible only with a tiny sample) has one cell, at its own centroid.
    const own = members[c]!.length > 0 ? kmeans(sample, members[c]!, count, d, TRAINING_ROUNDS, rand) : coarse.subarray(c * d, c * d + d);
    fine.set(own, firstCell[c]! * d);
  }
  return { dimension: d, coarse, firstCell, fine };
}
