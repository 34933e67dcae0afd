import { describe, expect, test } from "bun:test";
import { addFrames, deltaBic, emptyStats, tiedDeltaBic } from "../../src/engines/speaker-gaussian";
import { resegment } from "../../src/engines/speaker-resegment";

/** Frames of `d` features around `mean` with unit spread, from a seeded generator (the same every run). */
function voice(seed: number, count: number, d: number, mean: number): Float32Array {
  let state = seed;
  const uniform = () => {
    state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
    return (state + 1) / 2_147_483_649;
  };
  return Float32Array.from({ length: count * d }, () => mean + Math.sqrt(-2 * Math.log(uniform())) * Math.cos(2 * Math.PI * uniform()));
}

const statsOf = (frames: Float32Array, d: number) => addFrames(emptyStats(d), frames, 0, frames.length / d);

describe("tied-covariance ΔBIC (decision 178)", () => {
  const d = 13;
  test("one second each of two voices apart in their means: two by the tied BIC where the full-covariance BIC says one", () => {
    const a = statsOf(voice(1, 100, d, 0), d);
    const b = statsOf(voice(2, 100, d, 1.5), d);
    expect(tiedDeltaBic(a, b, 3)).toBeGreaterThan(0);
    expect(deltaBic(a, b, 3)).toBeLessThan(0);
  });

  test("two stretches of one voice: one", () => {
    expect(tiedDeltaBic(statsOf(voice(3, 100, d, 0), d), statsOf(voice(4, 100, d, 0), d), 3)).toBeLessThan(0);
  });
});

describe("relabelling frames by Viterbi", () => {
  const d = 3;
  // A speaks frames 0-299, B 300-499, A again 500-799.
  const frames = new Float32Array(800 * d);
  frames.set(voice(5, 300, d, 0), 0);
  frames.set(voice(6, 200, d, 4), 300 * d);
  frames.set(voice(7, 300, d, 0), 500 * d);
  const runs = (labels: Int32Array) => {
    const out: { label: number; from: number }[] = [];
    labels.forEach((l, f) => {
      if (out.at(-1)?.label !== l) out.push({ label: l, from: f });
    });
    return out;
  };

  test("turn changes a change detector placed 0.6 s late move to within a few frames of the truth, with no flicker", () => {
    const labels = new Int32Array(800).fill(0).fill(1, 360, 560);
    resegment([{ frames, d, count: 800, labels }], 100, 2);
    const found = runs(labels);
    expect(found.map((r) => r.label)).toEqual([0, 1, 0]);
    expect(Math.abs(found[1]!.from - 300)).toBeLessThan(5);
    expect(Math.abs(found[2]!.from - 500)).toBeLessThan(5);
  });

  test("frames no cluster held yet are given one; a lone cluster is left as it is", () => {
    const labels = new Int32Array(800).fill(-1).fill(0, 0, 200).fill(1, 320, 480);
    resegment([{ frames, d, count: 800, labels }], 100, 2);
    expect(runs(labels).map((r) => r.label)).toEqual([0, 1, 0]);
    const alone = new Int32Array(800).fill(0);
    resegment([{ frames, d, count: 800, labels: alone }], 100, 2);
    expect(runs(alone)).toEqual([{ label: 0, from: 0 }]);
  });
});
