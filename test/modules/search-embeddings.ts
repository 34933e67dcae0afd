/**
 * Synthetic sentence embeddings with topical structure, for the recall test and
 * bench/search.ts: a real model is too big for CI, and uniform random vectors have no near
 * neighbours at all (every pair is ~orthogonal), so a recall figure on them means nothing.
 *
 * Each vector is a shared direction (real embeddings share one: unrelated sentences still
 * have cosine ~0.1), a topic, one of the topic's subtopics and noise, normalised. Cosines
 * come out about 0.09 for unrelated chunks, 0.34 within a topic and 0.5 within a subtopic,
 * close to what all-MiniLM-L6-v2 gives for unrelated, same-subject and same-question
 * sentences. A query is drawn the same way, so its nearest chunks are its subtopic's.
 */
export function topicalEmbeddings(o: { seed: number; dimension: number; topics: number; subtopicsPerTopic?: number }) {
  let state = o.seed || 1;
  const rand = () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 0x100000000;
  };
  const gaussian = () => Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand());
  const direction = () => normalised(Float32Array.from({ length: o.dimension }, gaussian));
  const shared = direction();
  const topics = Array.from({ length: o.topics }, () => ({ topic: direction(), subtopics: Array.from({ length: o.subtopicsPerTopic ?? 20 }, direction) }));
  return function next(): Float32Array {
    const { topic, subtopics } = topics[Math.floor(rand() * topics.length)]!;
    const subtopic = subtopics[Math.floor(rand() * subtopics.length)]!;
    const noise = direction();
    return normalised(shared.map((s, i) => 0.3 * s + 0.5 * topic[i]! + 0.4 * subtopic[i]! + 0.7 * noise[i]!));
  };
}

function normalised(v: Float32Array): Float32Array {
  let sum = 0;
  for (const x of v) sum += x * x;
  const norm = Math.sqrt(sum);
  return v.map((x) => x / norm);
}

/** Share of the exact top-k found by an approximate top-k: |found ∩ exact| / |exact|. */
export function recall(found: number[], exact: number[]): number {
  const truth = new Set(exact);
  return exact.length === 0 ? 1 : found.filter((id) => truth.has(id)).length / exact.length;
}
