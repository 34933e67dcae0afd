import { expect } from "bun:test";
import { clusterPieces, type Penalties, resegmentPieces, type SpeechPiece } from "../../src/engines/classic-diarizer";
import type { SpeakerCountHint } from "../../src/engines/diarizer";
import { addFrames, emptyStats } from "../../src/engines/speaker-gaussian";

/** Frames per hand-made turn: 3 s at 100 frames a second. */
export const TURN_FRAMES = 300;

/** One stretch per turn (3 s, then a 1 s pause), the frames `d` wide, and one piece per turn, as the diarizer's clustering takes them. */
export function stretchesOfTurns(turns: Float32Array[], d: number) {
  const stretches = turns.map((frames, t) => ({
    region: { start: t * 4, end: t * 4 + 3 },
    frames,
    d,
    times: Float64Array.from({ length: TURN_FRAMES }, (_, f) => t * 4 + f / 100),
    count: TURN_FRAMES,
  }));
  const pieces: SpeechPiece[] = stretches.map((s, t) => ({
    start: s.region.start,
    end: s.region.end,
    stats: addFrames(emptyStats(d), s.frames, 0, TURN_FRAMES),
    stretch: t,
    from: 0,
    to: TURN_FRAMES,
  }));
  return { stretches, pieces };
}

/** That `turns` turns of two voices taking turns came back as two clusters, each turn's middle in a span of its own voice's. */
export function expectTwoVoicesTakingTurns(redrawn: { spans: { start: number; end: number }[]; clusters: number[] }, turns: number): void {
  expect(new Set(redrawn.clusters).size).toBe(2);
  const at = (t: number) => redrawn.clusters[redrawn.spans.findIndex((s) => s.start <= t && t < s.end)]!;
  const labels = Array.from({ length: turns }, (_, t) => at(t * 4 + 1.5));
  expect(labels.filter((_, t) => t % 2 === 0).every((c) => c === labels[0])).toBe(true);
  expect(labels.filter((_, t) => t % 2 === 1).every((c) => c === labels[1])).toBe(true);
  expect(labels[0]).not.toBe(labels[1]);
}

/** How many speakers the clustering and the redrawing after it find in `turns`, with `penalties` and the count `hint`. */
export function speakersFound(turns: ReturnType<typeof stretchesOfTurns>, penalties: Penalties, hint: SpeakerCountHint = {}): number {
  const clusters = clusterPieces(turns.pieces, {}, penalties);
  return new Set(resegmentPieces(turns.stretches, turns.pieces, clusters, penalties, hint).clusters).size;
}
