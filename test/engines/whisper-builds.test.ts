import { join } from "node:path";
import { mkdirSync, writeFileSync } from "node:fs";
import { describe, expect, test } from "bun:test";
import { ensureTestModels } from "../../scripts/test-models/cache";
import { cpuFingerprint, NATIVE_WHISPER, nativeWhisperStatus } from "../../src/engines/whisper-native-build";
import { nativeWhisperAddon, openNativeWhisper } from "../../src/engines/whisper-native";
import { openPrebuiltWhisper } from "../../src/engines/whisper-prebuilt";
import { DEFAULT_DECODING, type WhisperOutput } from "../../src/engines/whisper-runner";
import { makeTempDir } from "../helpers";
import { voicedBurst } from "./signals";

const models = ensureTestModels();
const greedy = { ...DEFAULT_DECODING, temperatureInc: 0, threads: 2 };
const native = nativeWhisperStatus();

function expectWellFormed(output: WhisperOutput, seconds: number) {
  expect(output.segments.length).toBeGreaterThan(0);
  for (const s of output.segments) {
    expect(s.t0).toBeGreaterThanOrEqual(0);
    expect(s.t1).toBeGreaterThanOrEqual(s.t0);
    expect(s.t0).toBeLessThanOrEqual(seconds * 1000 + 30_000); // whisper pads to a 30 s window
    expect(typeof s.text).toBe("string");
  }
}

describe("Parley's whisper.cpp addon built for this CPU (decision 046)", () => {
  // `npm install` builds it; CI has cmake, so there it must exist. Elsewhere it may be missing.
  test.if(Boolean(process.env.CI))("CI: npm install built the addon for this machine", () => {
    expect(native).toEqual({ usable: true });
  });

  test.if(native.usable)("transcribes with word probabilities and the language asked", async () => {
    const runner = (await openNativeWhisper(models.whisper))!;
    expect(runner.backend).toBe("cpu-native");
    const output = await runner.transcribe(voicedBurst(3, 0, 3), { ...greedy, language: "en" }).promise;
    expectWellFormed(output, 3);
    expect(output.language).toBe("en");
    const scored = output.segments.filter((s) => s.p !== null);
    expect(scored.length).toBeGreaterThan(0);
    for (const s of scored) expect(s.p!).toBeGreaterThan(0), expect(s.p!).toBeLessThanOrEqual(1);
  });

  test.if(native.usable)("detects a language on a multilingual model", async () => {
    const runner = (await openNativeWhisper(models.whisperMultilingual))!;
    const output = await runner.transcribe(voicedBurst(2, 0, 2), { ...greedy, language: "auto" }).promise;
    expect(output.language).toMatch(/^[a-z]{2,3}$/);
  });

  test.if(native.usable)("stop() ends a running call with an error instead of its result", async () => {
    const runner = (await openNativeWhisper(models.whisper))!;
    // Two minutes of speech take seconds to decode; a call that finished would resolve.
    const pcm = new Float32Array(120 * 16_000);
    for (let t = 0; t < 120; t += 10) pcm.set(voicedBurst(8, 0, 8), t * 16_000);
    const job = runner.transcribe(pcm, { ...greedy, language: "en" });
    setTimeout(() => job.stop(), 50);
    await expect(job.promise).rejects.toThrow("whisper.cpp transcription stopped");
  });

  test.if(native.usable)("a file that is not a ggml model is a rejected load, not a crash", async () => {
    const path = join(makeTempDir(), "garbage.bin");
    writeFileSync(path, "not a model");
    await expect(nativeWhisperAddon()!.load(path)).rejects.toThrow("could not load");
  });

  test("a build for another CPU, or none, is not used", () => {
    const dir = makeTempDir();
    const build = { ...NATIVE_WHISPER, buildDir: dir, addon: join(dir, "parley_whisper.node"), stamp: join(dir, "parley-build.json") };
    expect(nativeWhisperStatus(build)).toMatchObject({ usable: false, reason: expect.stringContaining("not built") });
    mkdirSync(dir, { recursive: true });
    writeFileSync(build.addon, "");
    writeFileSync(build.stamp, JSON.stringify({ source: "x", cpu: "another-cpu" }));
    expect(nativeWhisperStatus(build)).toMatchObject({ usable: false, reason: expect.stringContaining("another CPU") });
    writeFileSync(build.stamp, JSON.stringify({ source: "x", cpu: cpuFingerprint() }));
    expect(nativeWhisperStatus(build)).toEqual({ usable: true });
  });
});

describe("the prebuilt portable CPU build", () => {
  test("transcribes without word probabilities", async () => {
    const runner = await openPrebuiltWhisper("cpu", models.whisper);
    expect(runner.backend).toBe("cpu");
    const output = await runner.transcribe(voicedBurst(3, 0, 3), { ...greedy, language: "en" }).promise;
    expectWellFormed(output, 3);
    expect(output.segments.every((s) => s.p === null)).toBe(true);
  });
});
