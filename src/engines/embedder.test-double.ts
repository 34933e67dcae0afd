import type { Embedder } from "./embedder";

/** Crude stemming so "prices" and "price" share a dimension, as a real model would place them close. */
function terms(text: string): string[] {
  return (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((w) => w.length > 2).map((w) => w.replace(/(ing|es|s)$/, ""));
}

function hash(term: string): number {
  let h = 2166136261;
  for (let i = 0; i < term.length; i++) h = Math.imul(h ^ term.charCodeAt(i), 16777619);
  return h >>> 0;
}

/**
 * TEST DOUBLE: a deterministic embedder (hashed bag of words, L2-normalised) for
 * relevance tests and benches, where a real model is too big for CI. Texts sharing
 * words get close vectors; it knows no synonyms.
 */
export class HashingTestEmbedder implements Embedder {
  constructor(
    private readonly dims = 384,
    readonly model = `test-hashing-${dims}`,
  ) {}

  async dimension(): Promise<number> {
    return this.dims;
  }

  async embed(texts: string[]): Promise<Float32Array[]> {
    return texts.map((text) => {
      const v = new Float32Array(this.dims);
      for (const term of terms(text)) {
        const h = hash(term);
        v[h % this.dims]! += h & 0x80000000 ? -1 : 1;
      }
      const norm = Math.hypot(...v) || 1;
      return v.map((x) => x / norm);
    });
  }
}
