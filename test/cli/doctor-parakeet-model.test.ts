import { copyFileSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { expect, test } from "bun:test";
import { ensureTestModels } from "../../scripts/test-models/cache";
import { diagnose } from "../../src/cli/doctor";
import { loadConfig } from "../../src/config";
import { defaultManifest, modelFilePath } from "../../src/model-files/manifest";
import { configuredModelState } from "../../src/model-files/state";
import { makeTempDir } from "../helpers";

const models = ensureTestModels();

async function doctor(env: Record<string, string>) {
  const dir = makeTempDir();
  const modelsDir = join(dir, "models");
  const checks = await diagnose(loadConfig({ PARLEY_DATA_DIR: dir, PARLEY_MODELS_DIR: modelsDir, PARLEY_GPU: "off", ...env }));
  return { modelsDir, transcriber: checks.find((c) => c.check === "transcriber"), model: checks.find((c) => c.check === "transcriber model") };
}

test("doctor loads a Parakeet model in Parley's addon and reads its family, quantization and shape from the file", async () => {
  const { transcriber, model } = await doctor({ PARLEY_WHISPER_MODEL: models.parakeet });
  expect(transcriber).toEqual({ check: "transcriber", ok: true, detail: `${models.parakeet} on Parakeet on cpu-native` });
  expect(model).toEqual({ check: "transcriber model", ok: true, detail: `${models.parakeet}: Parakeet, f16, 8 wide, 1 encoder layers, 32 tokens` });
});

test("a Parakeet manifest model not installed says what pulls it; a file under its name that is not the published one is not installed", async () => {
  const missing = await doctor({ PARLEY_WHISPER_MODEL: "parakeet-tdt-0.6b-v3-q8_0" });
  expect(missing.transcriber).toMatchObject({ ok: false });
  expect(missing.transcriber!.detail).toEndWith("models pull parakeet-tdt-0.6b-v3-q8_0");

  const dir = makeTempDir();
  const dest = modelFilePath(dir, "parakeet-tdt-0.6b-v3-q8_0", defaultManifest);
  mkdirSync(dirname(dest), { recursive: true });
  copyFileSync(models.parakeet, dest);
  expect(configuredModelState(dir, "parakeet-tdt-0.6b-v3-q8_0")).toEqual({
    status: "mismatch",
    detail:
      "f16, 8 wide, 1 encoder layers, 32 tokens: not the q8_0 file the manifest describes for parakeet-tdt-0.6b-v3-q8_0 (q8_0, 1024 wide, 24 encoder layers, 8192 tokens)",
  });
});
