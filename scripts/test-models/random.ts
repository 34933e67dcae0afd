/** Deterministic PRNG (an LCG) so a generated model is the same bytes every time (cacheable, reproducible). */
export function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}
