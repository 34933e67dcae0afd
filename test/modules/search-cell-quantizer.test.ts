import { expect, test } from "bun:test";
import { apportion, cellCount, cellOf, quantizerShape, trainQuantizer } from "../../src/modules/search/cell-quantizer";
import { topicalEmbeddings } from "./search-embeddings";

/**
 * The cell quantizer's balance (decision 204): a probe costs what its cell holds, so a
 * library whose subjects are uneven (one talked about seven times as much as others) must
 * still get cells of about one size, or the queries near the crowded subject scan several
 * times the codes of the rest (the tail of the search's latency).
 */
const DIMENSION = 64;

test("cells stay about one size when one subject holds most of the library", async () => {
  // Four subjects (each its own topic, different seeds): one of 7,000 vectors, three of 1,000.
  const subjects = [7_000, 1_000, 1_000, 1_000].map((n, i) => {
    const next = topicalEmbeddings({ seed: 11 + i, dimension: DIMENSION, topics: 1, subtopicsPerTopic: 40 });
    return Array.from({ length: n }, next);
  });
  const vectors = subjects.flat();
  const sample = new Float32Array(vectors.length * DIMENSION);
  vectors.forEach((v, i) => sample.set(v, i * DIMENSION));
  let seed = 7;
  const rand = () => {
    seed = (seed * 16807) % 2147483647;
    return seed / 2147483647;
  };
  const shape = quantizerShape(vectors.length, 625); // 4 coarse centroids, 16 cells of ~625
  expect(shape).toEqual({ coarseCount: 4, cells: 16 });
  const q = await trainQuantizer(sample, DIMENSION, shape, rand, async () => {});
  expect(cellCount(q)).toBe(16);
  const sizes = new Array<number>(cellCount(q)).fill(0);
  for (const v of vectors) sizes[cellOf(q, v)]!++;
  const mean = vectors.length / cellCount(q);
  // With as many cells under every coarse centroid (the code before), they held 232 to 1,221 (a mean of 625), here 425 to 995.
  expect(Math.min(...sizes)).toBeGreaterThan(mean / 2);
  expect(Math.max(...sizes)).toBeLessThan(1.75 * mean);
});

test("cells are shared out in proportion, at least one each and no more than a cluster's members", () => {
  const shares = apportion([700, 100, 100, 100], 16);
  expect(shares.reduce((a, b) => a + b, 0)).toBe(16);
  expect(shares[0]).toBe(11); // 11.2 of 16
  expect([...shares.slice(1)].sort()).toEqual([1, 2, 2]); // 1.6 each: the two largest remainders get the extra cells
  expect(apportion([5_000, 0, 3], 10)).toEqual([9, 1, 1]); // one each, even an empty cluster's, past the total if need be
  expect(apportion([2, 2], 10)).toEqual([2, 2]); // no more cells than members
});
