import { copyFileSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { expect, test } from "bun:test";
import { ensureShapedWhisperModel, ensureTestModels } from "../../scripts/test-models/cache";
import { diagnose } from "../../src/cli/doctor";
import { loadConfig } from "../../src/config";
import { defaultManifest, modelFilePath } from "../../src/model-files/manifest";
import { makeTempDir } from "../helpers";

/** A models folder with `file` installed where the manifest puts `name`, and the doctor's verdict on it. */
async function doctorOn(name: string, file: string) {
  const dir = makeTempDir();
  const modelsDir = join(dir, "models");
  const dest = modelFilePath(modelsDir, name, defaultManifest);
  mkdirSync(dirname(dest), { recursive: true });
  copyFileSync(file, dest);
  const checks = await diagnose(loadConfig({ PARLEY_DATA_DIR: dir, PARLEY_MODELS_DIR: modelsDir, PARLEY_WHISPER_MODEL: name, PARLEY_GPU: "off" }));
  return { transcriber: checks.find((c) => c.check === "transcriber"), model: checks.find((c) => c.check === "transcriber model") };
}

test("a quantized whisper model is chosen by its manifest name; doctor loads it and reads its quantization and shape from the file", async () => {
  const { transcriber, model } = await doctorOn("whisper-base.en-q5_1", ensureShapedWhisperModel("base.en", "q5_1"));
  expect(transcriber).toMatchObject({ ok: true });
  expect(transcriber!.detail).toStartWith("whisper-base.en-q5_1 on ");
  expect(model).toEqual({
    check: "transcriber model",
    ok: true,
    detail: "whisper-base.en-q5_1: q5_1, 512 wide, 6 encoder and 6 decoder layers, 51864 tokens, as published",
  });
});

test("a file that is not the model its name says (another shape or quantization) is not installed: one failing line says what it is and how to reinstall", async () => {
  const { transcriber, model } = await doctorOn("whisper-base.en-q8_0", ensureTestModels().whisper);
  expect(transcriber).toMatchObject({ ok: false });
  expect(transcriber!.detail).toStartWith("whisper-base.en-q8_0 is not installed: the file under its name is f16, 32 wide, 1 encoder and 1 decoder layers");
  expect(transcriber!.detail).toContain(
    "not the q8_0 file the manifest describes for whisper-base.en-q8_0 (q8_0, 512 wide, 6 encoder and 6 decoder layers, 51864 tokens)",
  );
  expect(transcriber!.detail).toEndWith("reinstall it: npm run parley -- models pull whisper-base.en-q8_0");
  expect(model).toBeUndefined();
});
