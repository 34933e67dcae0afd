import { type Manifest, defaultManifest, modelFilePath } from "./manifest";
import { isParakeetFile } from "./parakeet-header";

/** Which engine runs a transcription model: whisper.cpp's whisper or its Parakeet TDT (decision 181). */
export type TranscriberFamily = "whisper" | "parakeet";

/**
 * A manifest model's family is its kind; an operator's own file (a path) says it in its
 * header, which is whisper's unless it is laid out as Parakeet's. A missing own file counts
 * as whisper, whose engine then says it is missing.
 */
export function transcriberFamily(modelsDir: string, name: string, manifest: Manifest = defaultManifest): TranscriberFamily {
  const entry = manifest.models.find((m) => m.name === name);
  if (entry) return entry.kind === "parakeet" ? "parakeet" : "whisper";
  return isParakeetFile(modelFilePath(modelsDir, name, manifest)) ? "parakeet" : "whisper";
}
