import { describe, expect, test } from "bun:test";
import { clusterPieces, PENALTIES, resegmentPieces } from "../../src/engines/classic-diarizer";
import { CEPSTRA } from "../../src/engines/speaker-features";
import { splitByPitch } from "../../src/engines/speaker-pitch-split";
import { splitClusters } from "../../src/engines/speaker-split";
import { expectTwoVoicesTakingTurns, speakersFound, stretchesOfTurns, TURN_FRAMES } from "./whole-turns";

// Seeded "voices" of like sounds (decision 223): 8 sound classes with far-apart cepstra, each
// frame from one class in runs of 8 frames, and the log pitch (the feature after the cepstra)
// drawn around the voice's own level with a spread of 1 per frame. Voice B has voice A's sounds
// and a level 1 higher: per frame the two overlap too much for the tied BIC or the mixture over
// sounds, but a whole turn's level sits clearly at its voice's.
const D = CEPSTRA + 1;
let seed = 223;
const uniform = () => ((seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0) + 0.5) / 2 ** 32;
const normal = () => Math.sqrt(-2 * Math.log(uniform())) * Math.cos(2 * Math.PI * uniform());
const sounds = Array.from({ length: 8 }, () => Float64Array.from({ length: CEPSTRA }, () => normal() * 4));
const voiceA = { sounds, level: 0 };
const voiceB = { sounds, level: 1 };
type Voice = typeof voiceA;

function turn(voice: Voice, frames: number): Float32Array {
  const out = new Float32Array(frames * D);
  for (let f = 0; f < frames; f += 8) {
    const sound = voice.sounds[Math.floor(uniform() * voice.sounds.length)]!;
    for (let g = f; g < Math.min(frames, f + 8); g++) {
      for (let i = 0; i < CEPSTRA; i++) out[g * D + i] = sound[i]! + normal() * 0.7;
      out[g * D + CEPSTRA] = voice.level + normal();
    }
  }
  return out;
}

const stretchOf = (order: Voice[]) =>
  stretchesOfTurns(
    order.map((voice) => turn(voice, TURN_FRAMES)),
    D,
  );

const alternating = [voiceA, voiceB, voiceA, voiceB, voiceA, voiceB, voiceA, voiceB];
const labelled = (order: Voice[]) => stretchOf(order).stretches.map((s) => ({ frames: s.frames, d: D, count: s.count, labels: new Int32Array(s.count) }));

describe("the pitch test on whole turns (decision 223)", () => {
  test("two voices alike but for their pitch level are parted by it, each turn to its voice", () => {
    const { stretches, pieces } = stretchOf(alternating);
    const clusters = clusterPieces(pieces, {}, PENALTIES);
    expect(new Set(clusters).size).toBe(1); // the clustering alone cannot tell them apart...
    const [sounds] = splitClusters(labelled(alternating), Number.POSITIVE_INFINITY);
    expect(sounds!.ratio).toBeLessThan(PENALTIES.split); // ...nor the split test on their sounds
    const redrawn = resegmentPieces(stretches, pieces, clusters, PENALTIES);
    expectTwoVoicesTakingTurns(redrawn, alternating.length);
  });

  test("without the pitch test the same turns stay one speaker", () => {
    expect(speakersFound(stretchOf(alternating), { ...PENALTIES, pitch: Number.POSITIVE_INFINITY })).toBe(1);
  });

  test("one voice's turns are not parted, and the count hint's maximum is kept", () => {
    expect(speakersFound(stretchOf(alternating.map(() => voiceA)), PENALTIES)).toBe(1);
    expect(speakersFound(stretchOf(alternating), PENALTIES, { maxSpeakers: 1 })).toBe(1);
  });

  test("the ratio: two levels far above the threshold, one voice's well below; a flat pitch is not judged", () => {
    const [two] = splitByPitch(labelled(alternating), CEPSTRA, Number.POSITIVE_INFINITY);
    const [one] = splitByPitch(labelled(alternating.map(() => voiceA)), CEPSTRA, Number.POSITIVE_INFINITY);
    expect(two!.ratio).toBeGreaterThan(PENALTIES.pitch * 1.2);
    expect(one!.ratio).toBeLessThan(PENALTIES.pitch / 2);
    const flat = labelled(alternating);
    for (const s of flat) for (let f = 0; f < s.count; f++) s.frames[f * D + CEPSTRA] = 0;
    expect(splitByPitch(flat, CEPSTRA, 0)).toEqual([]);
  });
});
