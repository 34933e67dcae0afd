import { describe, expect, test } from "bun:test";
import { PENALTIES } from "../../src/engines/classic-diarizer";
import { CEPSTRA } from "../../src/engines/speaker-features";
import { splitByPitch } from "../../src/engines/speaker-pitch-split";
import { splitClusters } from "../../src/engines/speaker-split";
import { speakersFound, stretchesOfTurns, TURN_FRAMES } from "./whole-turns";

// Seeded "voices" of like sounds (decisions 221, 223): 8 sound classes, each frame from one class
// in runs of 8 frames, the log pitch (the feature after the cepstra) drawn around the voice's
// level with a spread of 1 per frame. Voice B is voice A with every class moved a little and
// its pitch level a little higher: by its sounds alone the split test leans towards two voices
// without reaching its threshold, by its pitch alone the pitch test too (decision 229).
const D = CEPSTRA + 1;
let seed = 229;
const uniform = () => ((seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0) + 0.5) / 2 ** 32;
const normal = () => Math.sqrt(-2 * Math.log(uniform())) * Math.cos(2 * Math.PI * uniform());
const vector = (scale: number) => Float64Array.from({ length: CEPSTRA }, () => normal() * scale);
const soundsA = Array.from({ length: 8 }, () => vector(4));
const voiceA = { sounds: soundsA, level: 0 };
const voiceB = {
  sounds: soundsA.map((m) => {
    const shift = vector(0.18);
    return m.map((x, i) => x + shift[i]!);
  }),
  level: 0.36,
};
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
const labelled = (order: Voice[]) => stretchOf(order).stretches.map((s) => ({ frames: s.frames, d: D, count: s.count, labels: new Int32Array(s.count) }));
const alternating = [voiceA, voiceB, voiceA, voiceB, voiceA, voiceB, voiceA, voiceB];

describe("a lower pitch threshold where the split test leans (decision 229)", () => {
  test("each test alone falls short: the sounds' ratio above 1 but under the split threshold, the pitch's between the two thresholds", () => {
    const [sounds] = splitClusters(labelled(alternating), Number.POSITIVE_INFINITY);
    const [pitch] = splitByPitch(labelled(alternating), CEPSTRA, Number.POSITIVE_INFINITY);
    expect(sounds!.ratio).toBeGreaterThan(1);
    expect(sounds!.ratio).toBeLessThan(PENALTIES.split);
    expect(pitch!.ratio).toBeGreaterThan(PENALTIES.leaningPitch);
    expect(pitch!.ratio).toBeLessThan(PENALTIES.pitch);
  });

  test("together they part the two voices; with the one pitch threshold for all they stay one speaker", () => {
    const turns = stretchOf(alternating);
    expect(speakersFound(turns, PENALTIES)).toBe(2);
    expect(speakersFound(turns, { ...PENALTIES, leaningPitch: PENALTIES.pitch })).toBe(1);
  });

  test("one voice's turns stay one speaker, and the count hint's maximum is kept", () => {
    expect(speakersFound(stretchOf(alternating.map(() => voiceA)), PENALTIES)).toBe(1);
    expect(speakersFound(stretchOf(alternating), PENALTIES, { maxSpeakers: 1 })).toBe(1);
  });
});
