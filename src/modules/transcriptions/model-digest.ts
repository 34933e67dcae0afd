import { statSync } from "node:fs";
import { hashFile, readInstalled } from "../../model-files/installed";
import { defaultManifest, modelFilePath } from "../../model-files/manifest";

/** Digests measured in this process, by file and its size and time: a model file is hashed once, not per job. */
const measured = new Map<string, string>();

/**
 * The SHA-256 of the transcriber's model file as it is now, which the legal export certifies
 * (decision 155): the digest recorded at install or published in the manifest when there is
 * one, else measured from the file (an operator's own model); null when there is no file.
 */
export async function transcriberModelSha256(modelsDir: string, model: string): Promise<string | null> {
  const entry = defaultManifest.models.find((m) => m.name === model);
  const first = entry?.files[0];
  const recorded = first ? (readInstalled(modelsDir)[model]?.files[first.path]?.sha256 ?? first.sha256) : null;
  if (recorded) return recorded;
  const path = modelFilePath(modelsDir, model);
  try {
    const { size, mtimeMs } = statSync(path);
    const key = `${path}:${size}:${mtimeMs}`;
    const known = measured.get(key) ?? (await hashFile(path)).sha256;
    measured.set(key, known);
    return known;
  } catch {
    // No file to measure (a test double, or one removed since it ran): the export says "not recorded".
    return null;
  }
}
