import { createRequire } from "node:module";
import { describe, expect, test } from "bun:test";
import { ensureTestModels } from "../../scripts/test-models/cache";
import { ParakeetTranscriber } from "../../src/engines/parakeet-transcriber";
import { NATIVE_WHISPER } from "../../src/engines/whisper-native-build";
import { voicedBurst } from "./signals";

const require = createRequire(import.meta.url);
const models = ensureTestModels();

/**
 * PARLEY_GPU reaches Parakeet (decision 199): asked for a GPU, parakeet.cpp takes the first
 * one ggml lists, which only a CUDA build of the addon (build:whisper -- --cuda) has. This
 * checkout's addon is a CPU build, so a GPU asked for must leave Parakeet on the CPU, working,
 * and `parley doctor` must say so. The GPU half was never run on a GPU.
 */
describe("Parakeet and PARLEY_GPU on a CPU build of the addon", () => {
  test("the addon names no GPU device", () => {
    const addon = require(NATIVE_WHISPER.addon) as { parakeetGpuDevice: () => string | null };
    expect(addon.parakeetGpuDevice()).toBeNull();
  });

  test("a GPU asked for: Parakeet transcribes on the CPU and says it runs there", async () => {
    const parakeet = new ParakeetTranscriber({ model: "tiny-parakeet", path: models.parakeet, threads: 1, gpu: "cuda" });
    const result = await parakeet.transcribe(voicedBurst(4, 0.5, 3.5), { language: "en" });
    expect(result.segments.flatMap((s) => s.words ?? []).length).toBeGreaterThan(0);
    expect(await parakeet.backend()).toBe("cpu-native");
  });
});
