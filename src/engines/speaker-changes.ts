import { addFrames, combine, deltaBic, emptyStats, type GaussianStats } from "./speaker-gaussian";

/** Frames per block: changes are looked for at block edges (every 0.1 s of voiced speech). */
export const BLOCK = 10;
/** Each side of a candidate change is compared over up to this many blocks (1 s)... */
const WINDOW_BLOCKS = 10;
/** ...and at least this many (0.5 s): a shorter side is too little speech to tell a voice by. */
const MIN_WINDOW_BLOCKS = 5;
/** Two changes are at least this many blocks apart (0.8 s), about the shortest turn ("Any blockers?"). */
const MIN_GAP_BLOCKS = 8;

/**
 * Speaker changes in one stretch of voiced frames by the ΔBIC of a window on each side of
 * every block edge (Chen and Gopalakrishnan, 1998): where two Gaussians explain the windows
 * better than one, by more than the penalty, and more than anywhere within MIN_GAP_BLOCKS,
 * the speaker changes. Returns frame indices, ascending.
 */
export function findSpeakerChanges(frames: Float32Array, d: number, count: number, penalty: number, signal?: AbortSignal): number[] {
  const blocks = Math.floor(count / BLOCK);
  if (blocks < 2 * MIN_WINDOW_BLOCKS) return [];
  // prefix[b]: the statistics of blocks 0..b-1, so any window is a difference of two.
  const prefix: GaussianStats[] = [emptyStats(d)];
  for (let b = 0; b < blocks; b++) prefix.push(addFrames(combine(prefix[b]!, emptyStats(d)), frames, b * BLOCK, (b + 1) * BLOCK));
  const scores: { block: number; score: number }[] = [];
  for (let c = MIN_WINDOW_BLOCKS; c <= blocks - MIN_WINDOW_BLOCKS; c++) {
    if (c % 64 === 0) signal?.throwIfAborted();
    const w = Math.min(WINDOW_BLOCKS, c, blocks - c);
    const left = combine(prefix[c]!, prefix[c - w]!, -1);
    const right = combine(prefix[c + w]!, prefix[c]!, -1);
    const score = deltaBic(left, right, penalty);
    if (score > 0) scores.push({ block: c, score });
  }
  const chosen: number[] = [];
  for (const { block } of scores.sort((a, b) => b.score - a.score)) {
    if (chosen.every((c) => Math.abs(c - block) >= MIN_GAP_BLOCKS)) chosen.push(block);
  }
  return chosen.sort((a, b) => a - b).map((b) => b * BLOCK);
}
