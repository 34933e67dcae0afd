import { describe, expect, test } from "bun:test";
import { statSync } from "node:fs";
import { pickSample, readSample, SPEECH_SAMPLES } from "../src/simulator/samples";
import { makeTestDeps } from "./helpers";

/** The sample conversations the simulator uploads are speech to the real decoder and the real Silero VAD. */
describe("the simulator's spoken samples", () => {
  test("are small Ogg Opus files", async () => {
    expect(SPEECH_SAMPLES.length).toBeGreaterThanOrEqual(3);
    for (const s of SPEECH_SAMPLES) {
      expect(statSync(s.path).size).toBeLessThan(80_000);
      expect(new TextDecoder().decode((await readSample(s)).subarray(0, 4))).toBe("OggS");
    }
  });

  test.each(SPEECH_SAMPLES.map((s) => [s.name, s] as const))("%s: 20-40 s, and the real VAD finds speech in most of it", async (_name, sample) => {
    const { engines } = await makeTestDeps();
    const probe = await engines.audio.probe(sample.path);
    expect(probe).toMatchObject({ codec: "opus", channels: 1 });
    expect(probe.durationSeconds).toBeGreaterThan(20);
    expect(probe.durationSeconds).toBeLessThan(40);
    const pcm = await engines.audio.decodePcm16k(sample.path);
    const regions = (await engines.vad.analyse(pcm)).regions;
    const speech = regions.reduce((sum, r) => sum + (r.end - r.start), 0);
    expect(regions.length).toBeGreaterThan(0);
    expect(speech / probe.durationSeconds!).toBeGreaterThan(0.5);
  });

  test("every device walks all samples, from a different start", () => {
    const names = (seed: number) => SPEECH_SAMPLES.map((_, n) => pickSample(seed, n).name);
    expect(new Set(names(0)).size).toBe(SPEECH_SAMPLES.length);
    expect(names(1)[0]).not.toBe(names(0)[0]);
  });
});
