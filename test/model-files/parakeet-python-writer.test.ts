import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, test } from "bun:test";
import { ensureTestModels } from "../../scripts/test-models/cache";
import { PARAKEET_SHAPES, parakeetTensors } from "../../scripts/test-models/parakeet-ggml";
import { ParakeetTranscriber } from "../../src/engines/parakeet-transcriber";
import { readParakeetHeader } from "../../src/model-files/parakeet-header";
import { voicedBurst } from "../engines/signals";

/**
 * bench/gpu.sh measures Parakeet on a GPU machine that has Python but no bun, so it writes
 * its stand-in with bench/gpu/make_parakeet_model.py, a numpy port of
 * scripts/test-models/parakeet-ggml.ts. The port must give the same file but for the random
 * values: same header, tensors, shapes and types, and parakeet.cpp must load and decode it.
 */
const work = mkdtempSync(join(tmpdir(), "parley-parakeet-py-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

function python(...args: string[]): string {
  const run = Bun.spawnSync(["python3", join(import.meta.dir, "..", "..", "bench", "gpu", "make_parakeet_model.py"), ...args], { stderr: "pipe" });
  if (run.exitCode !== 0) throw new Error(run.stderr.toString());
  return run.stdout.toString();
}

function pythonModel(shape: string): string {
  const path = join(work, `${shape}.bin`);
  python(path, shape);
  return path;
}

describe("bench/gpu/make_parakeet_model.py writes what the TypeScript stand-in writer writes", () => {
  test("the tiny model: same header and tensor table, and parakeet.cpp decodes it into timed words", async () => {
    const path = pythonModel("tiny");
    expect(readParakeetHeader(path, { tensors: true })).toEqual(readParakeetHeader(ensureTestModels().parakeet, { tensors: true }));
    const parakeet = new ParakeetTranscriber({ model: "tiny-parakeet-py", path, threads: 1 });
    const result = await parakeet.transcribe(voicedBurst(4, 0.5, 3.5), { language: "en" });
    // The steered joint bias emits a token every 4 encoder frames: words, whatever the weights.
    expect(result.segments.flatMap((s) => s.words ?? []).length).toBeGreaterThan(0);
  });

  test("parakeet-tdt-0.6b-v3: the same hyper-parameters and tensor table (1.2 GB: compared without writing it)", () => {
    const described = JSON.parse(python("--describe", "tdt-0.6b-v3"));
    expect(described.hparams).toEqual(PARAKEET_SHAPES["tdt-0.6b-v3"]);
    expect(described.tensors).toEqual(parakeetTensors(PARAKEET_SHAPES["tdt-0.6b-v3"], "f16"));
  });
});
