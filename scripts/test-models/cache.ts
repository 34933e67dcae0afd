import { createHash } from "node:crypto";
import { existsSync, readFileSync, renameSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { WhisperFileType } from "../../src/model-files/ggml-header";
import type { ParakeetFileType } from "../../src/model-files/parakeet-header";
import { GGUF_SHAPES, writeGguf, writeTinyGguf } from "./gguf";
import { PARAKEET_SHAPES, writeParakeetModel } from "./parakeet-ggml";
import { WHISPER_SHAPES, writeTinyWhisperModel, writeWhisperModel } from "./whisper-ggml";

export type TestModels = { dir: string; whisper: string; whisperMultilingual: string; parakeet: string; gguf: string };

/** A fingerprint of the generators, so a change to them regenerates the cached files. */
function generatorVersion(): string {
  const hash = createHash("sha256");
  for (const f of [
    "gguf.ts",
    "english-words.txt",
    "whisper-ggml.ts",
    "parakeet-ggml.ts",
    "random.ts",
    "../../src/model-files/ggml-header.ts",
    "../../src/model-files/parakeet-header.ts",
  ])
    hash.update(readFileSync(join(import.meta.dir, f)));
  return hash.digest("hex").slice(0, 12);
}

/** Writes through a temporary name then renames, so parallel test files never read half a model. */
function ensure(path: string, write: (p: string) => void) {
  if (existsSync(path)) return;
  const tmp = `${path}.${process.pid}.tmp`;
  write(tmp);
  renameSync(tmp, path);
}

function modelsDir(): string {
  return join(tmpdir(), `parley-test-models-${generatorVersion()}`);
}

/**
 * The tiny generated models (whisper ggml, English-only and multilingual, Parakeet ggml, and llama GGUF), cached under the OS temp
 * folder keyed by the generators' source, so the whole suite generates them once.
 */
export function ensureTestModels(): TestModels {
  const dir = modelsDir();
  const models = {
    dir,
    whisper: join(dir, "tiny-whisper.bin"),
    whisperMultilingual: join(dir, "tiny-whisper-multilingual.bin"),
    parakeet: join(dir, "tiny-parakeet.bin"),
    gguf: join(dir, "tiny-llama.gguf"),
  };
  ensure(models.whisper, (p) => writeTinyWhisperModel(p));
  ensure(models.whisperMultilingual, (p) => writeTinyWhisperModel(p, { multilingual: true }));
  ensure(models.parakeet, (p) => writeParakeetModel(p));
  ensure(models.gguf, writeTinyGguf);
  return models;
}

/**
 * A random-weight whisper model with a published model's exact shape and tensor types
 * (base.en f16 is 148 MB, small f16 488 MB): generated on first use, in seconds, and
 * cached beside the tiny models. For benches; tests check shapes without these files.
 */
export function ensureShapedWhisperModel(shape: Exclude<keyof typeof WHISPER_SHAPES, "tiny">, fileType: WhisperFileType, tokensPerWindow?: number): string {
  const path = join(modelsDir(), `whisper-${shape}-${fileType}${tokensPerWindow ? `-${tokensPerWindow}-tokens` : ""}.bin`);
  ensure(path, (p) => writeWhisperModel(p, { shape, fileType, tokensPerWindow }));
  return path;
}

/** A random-weight Parakeet model with parakeet-tdt-0.6b-v3's exact shape and tensor types (f16 about 1.2 GB), cached; for benches. */
export function ensureShapedParakeetModel(fileType: ParakeetFileType = "f16", shape: Exclude<keyof typeof PARAKEET_SHAPES, "tiny"> = "tdt-0.6b-v3"): string {
  const path = join(modelsDir(), `parakeet-${shape}-${fileType}.bin`);
  ensure(path, (p) => writeParakeetModel(p, { shape, fileType }));
  return path;
}

/** A random-weight GGUF with the default LLM's shapes and Q4_K_M types (about 1 GB; written in ~15 s), cached. */
export function ensureShapedGguf(shape: Exclude<keyof typeof GGUF_SHAPES, "tiny"> = "qwen2.5-1.5b-q4_k_m"): string {
  const path = join(modelsDir(), `${shape}.gguf`);
  ensure(path, (p) => writeGguf(p, { shape }));
  return path;
}
