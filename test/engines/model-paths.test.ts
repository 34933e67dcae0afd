// Every engine takes its model the same way: a manifest name, or an operator's own model by
// its path (absolute, or relative from the working folder, else under the models folder),
// a file for whisper and the LLM and a folder for the embedder; a missing one's advice names
// the path that was looked at.
import { expect, test } from "bun:test";
import { cpSync, mkdirSync } from "node:fs";
import { join, relative } from "node:path";
import { cachedTinyEmbedder, TINY_EMBEDDER_DIMENSION } from "../../scripts/test-models/onnx-embedder";
import { loadConfig } from "../../src/config";
import { createEngines } from "../../src/engines";
import type { LlamaLlm } from "../../src/engines/llama-llm";
import type { WhisperTranscriber } from "../../src/engines/whisper-transcriber";
import { createLogger } from "../../src/log";
import { modelDirectory, modelFilePath } from "../../src/model-files/manifest";
import { makeTempDir } from "../helpers";

const engines = (modelsDir: string, models: Record<string, string>) =>
  createEngines(loadConfig({ PARLEY_DATA_DIR: makeTempDir(), PARLEY_MODELS_DIR: modelsDir, ...models }), createLogger("silent"));

test("PARLEY_EMBEDDING_MODEL=/abs/path/to/model-folder: the folder is loaded, not looked for under the models folder", async () => {
  const folder = join(makeTempDir(), "my-embedder");
  cpSync(join(cachedTinyEmbedder(), "tiny-embedder"), folder, { recursive: true });
  const { embedder } = engines(makeTempDir(), { PARLEY_EMBEDDING_MODEL: folder });
  expect(await embedder.dimension()).toBe(TINY_EMBEDDER_DIMENSION);
  expect((await embedder.embed(["the marketing budget"]))[0]).toHaveLength(TINY_EMBEDDER_DIMENSION);
});

test("a model path relative to the working folder is taken as it is, for a file and a folder alike; a bare name is under the models folder", () => {
  const modelsDir = makeTempDir();
  const here = relative(process.cwd(), makeTempDir());
  mkdirSync(join(here, "own-embedder"));
  expect(modelDirectory(modelsDir, join(here, "own-embedder"))).toBe(join(here, "own-embedder"));
  expect(modelFilePath(modelsDir, join(here, "own-embedder"))).toBe(join(here, "own-embedder"));
  expect(modelDirectory(modelsDir, "own-embedder")).toBe(join(modelsDir, "own-embedder"));
  expect(modelDirectory(modelsDir, "all-minilm-l6-v2")).toBe(join(modelsDir, "all-minilm-l6-v2"));
});

test("a missing model of one's own: every engine's advice names the path it looked at", async () => {
  const modelsDir = makeTempDir();
  const gone = join(makeTempDir(), "gone");
  const absolute = engines(modelsDir, { PARLEY_WHISPER_MODEL: `${gone}/w.bin`, PARLEY_LLM_MODEL: `${gone}/l.gguf`, PARLEY_EMBEDDING_MODEL: `${gone}/e` });
  await expect((absolute.transcriber as WhisperTranscriber).load()).rejects.toThrow(`put the model's file at ${gone}/w.bin.`);
  await expect((absolute.llm as LlamaLlm).load()).rejects.toThrow(`put the model's file at ${gone}/l.gguf.`);
  await expect(absolute.embedder.dimension()).rejects.toThrow(`put the model's file at ${gone}/e/ (config.json`);
  // A relative path that is nowhere from the working folder was looked for under the models folder: the advice says so.
  const underModels = engines(modelsDir, { PARLEY_WHISPER_MODEL: "own/w.bin", PARLEY_LLM_MODEL: "own/l.gguf", PARLEY_EMBEDDING_MODEL: "own/e" });
  await expect((underModels.transcriber as WhisperTranscriber).load()).rejects.toThrow(`put the model's file at ${modelsDir}/own/w.bin.`);
  await expect((underModels.llm as LlamaLlm).load()).rejects.toThrow(`put the model's file at ${modelsDir}/own/l.gguf.`);
  await expect(underModels.embedder.dimension()).rejects.toThrow(`put the model's file at ${modelsDir}/own/e/ (config.json`);
});
