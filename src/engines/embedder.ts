/** Text to vectors for semantic search (implementation over transformers.js: src/engines/transformers-embedder.ts). */
export interface Embedder {
  readonly model: string;
  /** Vector length; checked against the index at start (a change triggers a re-index). */
  dimension(): Promise<number>;
  embed(texts: string[]): Promise<Float32Array[]>;
}
