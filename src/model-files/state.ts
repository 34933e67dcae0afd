import { existsSync } from "node:fs";
import { join } from "node:path";
import { readWhisperHeader, type WhisperFileHeader } from "./ggml-header";
import { defaultManifest, type Manifest, type ModelEntry, modelFilePath } from "./manifest";
import { describeParakeetFile, type ParakeetFileHeader, readParakeetHeader } from "./parakeet-header";

export type ModelStatus = "installed" | "missing" | "partial" | "bundled" | "mismatch";

/** A model's state by the one rule (decision 120); `detail` says what is missing or wrong. */
export type ModelState = { status: ModelStatus; detail: string | null };

/** What a whisper file is, from its header: "f16, 512 wide, 6 encoder and 6 decoder layers, 51864 tokens". */
export function describeWhisperFile({ fileType, hparams: h }: Pick<WhisperFileHeader, "fileType" | "hparams">): string {
  return `${fileType}, ${h.n_audio_state} wide, ${h.n_audio_layer} encoder and ${h.n_text_layer} decoder layers, ${h.n_vocab} tokens`;
}

/** How to read and describe a model file of each kind whose header states its shape and quantization. */
const HEADERS: Partial<Record<ModelEntry["kind"], { read: (path: string) => FileHeader; describe: (h: FileHeader) => string }>> = {
  whisper: { read: readWhisperHeader, describe: (h) => describeWhisperFile(h as WhisperFileHeader) },
  parakeet: { read: readParakeetHeader, describe: (h) => describeParakeetFile(h as ParakeetFileHeader) },
};
type FileHeader = { fileType: string; hparams: object };

/**
 * Null when the file at `path` is the one the manifest publishes for `model` (or it publishes
 * nothing that can be read from a file); else what the file is instead. Whisper and Parakeet
 * files only: their header states the shape and quantization, and a stand-in under a
 * published name would otherwise load and transcribe nonsense.
 */
export function notAsPublished(model: ModelEntry, path: string): string | null {
  const published = model.parameters;
  const format = HEADERS[model.kind];
  if (!format || !published) return null;
  let header: FileHeader;
  try {
    header = format.read(path);
  } catch (err) {
    return (err as Error).message;
  }
  const hparams = (published.hparams ?? {}) as Record<string, number>;
  const stated = header.hparams as Record<string, number>;
  const same = published.file_type === header.fileType && Object.entries(hparams).every(([k, v]) => stated[k] === v);
  if (same) return null;
  const expected = format.describe({ fileType: String(published.file_type), hparams });
  return `${format.describe(header)}: not the ${published.file_type} file the manifest describes for ${model.name} (${expected})`;
}

/**
 * The one rule for what "installed" means (decision 120), shared by `models import`,
 * `models verify`, `models list`, doctor, GET /v1/health, the dashboard and the engines:
 * every file of the manifest entry is in place, and a file whose header can be read is the
 * one the manifest publishes. Checksums are `verify`'s (they take a read of every byte).
 */
export function modelState(modelsDir: string, model: ModelEntry): ModelState {
  if (model.bundled) return { status: "bundled", detail: null };
  const absent = model.files.filter((f) => !existsSync(join(modelsDir, f.path))).map((f) => f.path);
  if (absent.length === model.files.length) return { status: "missing", detail: null };
  if (absent.length) return { status: "partial", detail: `${absent.join(", ")} missing` };
  const wrong = notAsPublished(model, join(modelsDir, model.files[0]!.path));
  return wrong ? { status: "mismatch", detail: wrong } : { status: "installed", detail: null };
}

/** A configured model's state: a manifest model by the rule above, an operator's own (a path) by whether its file exists. */
export function configuredModelState(modelsDir: string, name: string, manifest: Manifest = defaultManifest): ModelState {
  const entry = manifest.models.find((m) => m.name === name);
  if (entry) return modelState(modelsDir, entry);
  return { status: existsSync(modelFilePath(modelsDir, name, manifest)) ? "installed" : "missing", detail: null };
}

/** Whether a state lets the engine run its model: installed, or carried inside Parley. */
export const usable = (state: ModelState): boolean => state.status === "installed" || state.status === "bundled";
