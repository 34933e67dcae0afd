import { describe, expect, test } from "bun:test";
import { clusterPieces, PENALTIES, resegmentPieces } from "../../src/engines/classic-diarizer";
import { splitClusters } from "../../src/engines/speaker-split";
import { expectTwoVoicesTakingTurns, speakersFound, stretchesOfTurns, TURN_FRAMES } from "./whole-turns";

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

const stretchOf = (order: Float64Array[][]) =>
  stretchesOfTurns(
    order.map((voice) => turn(voice, TURN_FRAMES)),
    D,
  );

const alternating = [voiceA, voiceB, voiceA, voiceB, voiceA, voiceB, voiceA, voiceB];

describe("the split test on whole turns (decision 221)", () => {
  test("two close voices that the tied BIC joins are parted by their turns, each turn to its voice", () => {
    const { stretches, pieces } = stretchOf(alternating);
    const clusters = clusterPieces(pieces, {}, PENALTIES);
    expect(new Set(clusters).size).toBe(1); // the clustering alone cannot tell them apart
    const redrawn = resegmentPieces(stretches, pieces, clusters, PENALTIES);
    expectTwoVoicesTakingTurns(redrawn, alternating.length);
  });

  test("without the split test the same turns stay one speaker", () => {
    expect(speakersFound(stretchOf(alternating), { ...PENALTIES, split: Number.POSITIVE_INFINITY })).toBe(1);
  });

  test("one voice's turns are not parted, and the count hint's maximum is kept", () => {
    expect(speakersFound(stretchOf(alternating.map(() => voiceA)), PENALTIES)).toBe(1);
    expect(speakersFound(stretchOf(alternating), PENALTIES, { maxSpeakers: 1 })).toBe(1);
  });

  const labelled = (order: Float64Array[][]) => {
    const { stretches } = stretchOf(order);
    return stretches.map((s) => ({ frames: s.frames, d: D, count: s.count, labels: new Int32Array(s.count) }));
  };

  test("the ratio: two voices' turns far above the threshold, one voice's below", () => {
    const [two] = splitClusters(labelled(alternating), Number.POSITIVE_INFINITY);
    const [one] = splitClusters(labelled(alternating.map(() => voiceA)), Number.POSITIVE_INFINITY);
    expect(two!.ratio).toBeGreaterThan(PENALTIES.split);
    expect(one!.ratio).toBeLessThan(PENALTIES.split);
  });

  test("a split whose parts lie closer than apart is undone; two voices' split stands (decision 238)", () => {
    // A threshold of 0 parts any cluster with two whole turns: one voice's turns too.
    const oneVoice = labelled(alternating.map(() => voiceA));
    const before = oneVoice.map((s) => [...s.labels]);
    expect(splitClusters(oneVoice, 0, undefined, PENALTIES.apart)[0]!.split).toBe(false);
    expect(oneVoice.map((s) => [...s.labels])).toEqual(before);

    const twoVoices = labelled(alternating);
    expect(splitClusters(twoVoices, 0, undefined, PENALTIES.apart)[0]!.split).toBe(true);
    expect(new Set(twoVoices.flatMap((s) => [...s.labels])).size).toBe(2);
  });

  test("with apart 0 the same split of one voice stands", () => {
    const oneVoice = labelled(alternating.map(() => voiceA));
    expect(splitClusters(oneVoice, 0)[0]!.split).toBe(true);
    expect(new Set(oneVoice.flatMap((s) => [...s.labels])).size).toBe(2);
  });
});
