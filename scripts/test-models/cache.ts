import { createHash } from "node:crypto";
import { existsSync, readFileSync, renameSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { writeTinyGguf } from "./gguf";
import { writeTinyWhisperModel } from "./whisper-ggml";

export type TestModels = { dir: string; whisper: string; whisperMultilingual: string; gguf: string };

/** A fingerprint of the generators, so a change to them regenerates the cached files. */
function generatorVersion(): string {
  const hash = createHash("sha256");
  for (const f of ["gguf.ts", "whisper-ggml.ts"]) hash.update(readFileSync(join(import.meta.dir, f)));
  return hash.digest("hex").slice(0, 12);
}

/** Writes through a temporary name then renames, so parallel test files never read half a model. */
function ensure(path: string, write: (p: string) => void) {
  if (existsSync(path)) return;
  const tmp = `${path}.${process.pid}.tmp`;
  write(tmp);
  renameSync(tmp, path);
}

/**
 * The tiny generated models (whisper ggml, English-only and multilingual, and llama GGUF), cached under the OS temp
 * folder keyed by the generators' source, so the whole suite generates them once.
 */
export function ensureTestModels(): TestModels {
  const dir = join(tmpdir(), `parley-test-models-${generatorVersion()}`);
  const models = { dir, whisper: join(dir, "tiny-whisper.bin"), whisperMultilingual: join(dir, "tiny-whisper-multilingual.bin"), gguf: join(dir, "tiny-llama.gguf") };
  ensure(models.whisper, (p) => writeTinyWhisperModel(p));
  ensure(models.whisperMultilingual, (p) => writeTinyWhisperModel(p, { multilingual: true }));
  ensure(models.gguf, writeTinyGguf);
  return models;
}
