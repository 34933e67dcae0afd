import { describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { loadConfig } from "../src/config";
import { formatMissingModels, missingDemoModels } from "../src/demo";
import { modelFilePath } from "../src/model-files/manifest";
import { makeTempDir } from "./helpers";

describe("parley demo: the models it needs", () => {
  test("with an empty models folder, all three are missing, each with the command that installs it", () => {
    const config = loadConfig({ PARLEY_DATA_DIR: makeTempDir(), PARLEY_MODELS_DIR: makeTempDir() });
    const missing = missingDemoModels(config);
    expect(missing.map((m) => m.model)).toEqual([config.models.whisper, config.models.llm, config.models.embedding]);
    const notice = formatMissingModels(missing);
    for (const m of missing) expect(notice).toContain(`models pull ${m.model}`);
    expect(notice).toContain("models import PATH");
  });

  test("a model given as a path that does not exist: the notice says to put its file there, not to pull it", () => {
    const own = join(makeTempDir(), "my-llm.gguf");
    const config = loadConfig({ PARLEY_DATA_DIR: makeTempDir(), PARLEY_MODELS_DIR: makeTempDir(), PARLEY_LLM_MODEL: own });
    const notice = formatMissingModels(missingDemoModels(config));
    expect(notice).toContain(`put the model's file at ${own}`);
    expect(notice).not.toContain(`models pull ${own}`);
  });

    test("an installed model drops out of the list; a model given as a path counts when the file exists", () => {
    const modelsDir = makeTempDir();
    const own = join(makeTempDir(), "my-llm.gguf");
    writeFileSync(own, "gguf");
    const config = loadConfig({ PARLEY_DATA_DIR: makeTempDir(), PARLEY_MODELS_DIR: modelsDir, PARLEY_LLM_MODEL: own });
    const whisper = modelFilePath(modelsDir, config.models.whisper);
    mkdirSync(dirname(whisper), { recursive: true });
    writeFileSync(whisper, "ggml");
    expect(missingDemoModels(config).map((m) => m.model)).toEqual([config.models.embedding]);
  });
});
