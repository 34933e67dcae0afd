import { describe, expect, test } from "bun:test";
import { clusterPieces, PENALTIES, resegmentPieces, type SpeechPiece } from "../../src/engines/classic-diarizer";
import { addFrames, emptyStats } from "../../src/engines/speaker-gaussian";
import { splitClusters } from "../../src/engines/speaker-split";

// Seeded "voices" made of like sounds: each voice is 8 sound classes (far apart means, the
// phones), each frame from one class in runs of 8 frames. Voice B is voice A with every class
// moved a little, each in its own direction: one Gaussian per voice (the tied BIC) sees two
// broad, nearly equal clouds, a mixture over like sounds sees every class move (decision 221).
const D = 13;
let seed = 221;
const uniform = () => ((seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0) + 0.5) / 2 ** 32;
const normal = () => Math.sqrt(-2 * Math.log(uniform())) * Math.cos(2 * Math.PI * uniform());
const vector = (scale: number) => Float64Array.from({ length: D }, () => normal() * scale);
const voiceA = Array.from({ length: 8 }, () => vector(4));
const voiceB = voiceA.map((m) => {
  const shift = vector(1);
  return m.map((x, i) => x + shift[i]!);
});

function turn(voice: Float64Array[], frames: number): Float32Array {
  const out = new Float32Array(frames * D);
  for (let f = 0; f < frames; f += 8) {
    const sound = voice[Math.floor(uniform() * voice.length)]!;
    for (let g = f; g < Math.min(frames, f + 8); g++) for (let i = 0; i < D; i++) out[g * D + i] = sound[i]! + normal() * 0.7;
  }
  return out;
}

/** One stretch per turn (a pause between them) of 300 frames (3 s) by the voices in `order`, and one piece per turn. */
function stretchOf(order: Float64Array[][]) {
  const stretches = order.map((voice, t) => {
    const frames = turn(voice, 300);
    return { region: { start: t * 4, end: t * 4 + 3 }, frames, d: D, times: Float64Array.from({ length: 300 }, (_, f) => t * 4 + f / 100), count: 300 };
  });
  const pieces: SpeechPiece[] = stretches.map((s, t) => ({
    start: s.region.start,
    end: s.region.end,
    stats: addFrames(emptyStats(D), s.frames, 0, 300),
    stretch: t,
    from: 0,
    to: 300,
  }));
  return { stretches, pieces };
}

const alternating = [voiceA, voiceB, voiceA, voiceB, voiceA, voiceB, voiceA, voiceB];

describe("the split test on whole turns (decision 221)", () => {
  test("two close voices that the tied BIC joins are parted by their turns, each turn to its voice", () => {
    const { stretches, pieces } = stretchOf(alternating);
    const clusters = clusterPieces(pieces, {}, PENALTIES);
    expect(new Set(clusters).size).toBe(1); // the clustering alone cannot tell them apart
    const redrawn = resegmentPieces(stretches, pieces, clusters, PENALTIES);
    expect(new Set(redrawn.clusters).size).toBe(2);
    // Each turn's middle lies in a span of its voice's cluster, the voices' clusters differ.
    const at = (t: number) => redrawn.clusters[redrawn.spans.findIndex((s) => s.start <= t && t < s.end)]!;
    const labels = alternating.map((_, t) => at(t * 4 + 1.5));
    expect(labels.filter((_, t) => t % 2 === 0).every((c) => c === labels[0])).toBe(true);
    expect(labels.filter((_, t) => t % 2 === 1).every((c) => c === labels[1])).toBe(true);
    expect(labels[0]).not.toBe(labels[1]);
  });

  test("without the split test the same turns stay one speaker", () => {
    const { stretches, pieces } = stretchOf(alternating);
    const clusters = clusterPieces(pieces, {}, PENALTIES);
    const redrawn = resegmentPieces(stretches, pieces, clusters, { ...PENALTIES, split: Number.POSITIVE_INFINITY });
    expect(new Set(redrawn.clusters).size).toBe(1);
  });

  test("one voice's turns are not parted, and the count hint's maximum is kept", () => {
    const lone = stretchOf(alternating.map(() => voiceA));
    const clusters = clusterPieces(lone.pieces, {}, PENALTIES);
    expect(new Set(resegmentPieces(lone.stretches, lone.pieces, clusters, PENALTIES).clusters).size).toBe(1);
    const two = stretchOf(alternating);
    const joined = clusterPieces(two.pieces, {}, PENALTIES);
    expect(new Set(resegmentPieces(two.stretches, two.pieces, joined, PENALTIES, { maxSpeakers: 1 }).clusters).size).toBe(1);
  });

  test("the ratio: two voices' turns far above the threshold, one voice's below", () => {
    const labelled = (order: Float64Array[][]) => {
      const { stretches } = stretchOf(order);
      return stretches.map((s) => ({ frames: s.frames, d: D, count: s.count, labels: new Int32Array(s.count) }));
    };
    const [two] = splitClusters(labelled(alternating), Number.POSITIVE_INFINITY);
    const [one] = splitClusters(labelled(alternating.map(() => voiceA)), Number.POSITIVE_INFINITY);
    expect(two!.ratio).toBeGreaterThan(PENALTIES.split);
    expect(one!.ratio).toBeLessThan(PENALTIES.split);
  });
});
