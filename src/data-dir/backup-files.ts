import { createHash } from "node:crypto";
import { type FileHandle, mkdir, open, readFile } from "node:fs/promises";
import { dirname } from "node:path";

/** One file of a backup, as the manifest lists it: a path relative to the backup's folder. */
export type BackupFile = { path: string; size: number; sha256: string };

/** `manifest.json` at the root of a backup (decision 087). */
export type BackupManifest = {
  format: "parley-backup";
  format_version: 1;
  parley_version: string;
  created_at: string;
  /** The last migration the database has. */
  schema: string | null;
  /** local: the audio is in the backup; s3: it is not (it stays in the bucket). */
  audio: { storage: "local" } | { storage: "s3"; bucket: string; note: string };
  /** file: secret.key is in the backup; environment: PARLEY_SECRET was set, the backup holds no secret. */
  secret: "file" | "environment" | "none";
  files: BackupFile[];
  /** Objects the database refers to that storage did not have when the backup ran. */
  missing_objects: string[];
};

export const MANIFEST = "manifest.json";

/** A backup or restore that cannot go on, for a reason the operator must see (exit 1). */
export class BackupError extends Error {}

const CHUNK = 1024 * 1024;

/** The file at `path` opened for reading, or null when it does not exist. */
async function openIfExists(path: string): Promise<FileHandle | null> {
  try {
    return await open(path, "r");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw err;
  }
}

/** Reads `file` to its end in 1 MiB chunks, hashing them and handing each to `sink`. */
async function hashChunks(file: FileHandle, sink?: (bytes: Uint8Array) => Promise<unknown>): Promise<{ size: number; sha256: string }> {
  const hash = createHash("sha256");
  const buffer = Buffer.allocUnsafe(CHUNK);
  let size = 0;
  for (let r = await file.read(buffer, 0, CHUNK, null); r.bytesRead > 0; r = await file.read(buffer, 0, CHUNK, null)) {
    const bytes = buffer.subarray(0, r.bytesRead);
    hash.update(bytes);
    await sink?.(bytes);
    size += r.bytesRead;
  }
  return { size, sha256: hash.digest("hex") };
}

/**
 * Copies `from` to `to` (made 0600, parent folders 0700) in one pass that hashes what it
 * writes, then fsyncs it. Returns null when `from` does not exist.
 */
export async function copyHashed(from: string, to: string): Promise<{ size: number; sha256: string } | null> {
  const source = await openIfExists(from);
  if (!source) return null;
  try {
    await mkdir(dirname(to), { recursive: true, mode: 0o700 });
    const target = await open(to, "w", 0o600);
    try {
      // writeFile on a handle writes all of it at the current position (write() may write less).
      const copied = await hashChunks(source, (bytes) => target.writeFile(bytes));
      await target.sync();
      return copied;
    } finally {
      await target.close();
    }
  } finally {
    await source.close();
  }
}

/** SHA-256 and size of a file, read in chunks; null when it does not exist. */
export async function hashFile(path: string): Promise<{ size: number; sha256: string } | null> {
  const file = await openIfExists(path);
  if (!file) return null;
  try {
    return await hashChunks(file);
  } finally {
    await file.close();
  }
}

/** Reads and checks the manifest of the backup at `dir`. */
export async function readManifest(dir: string): Promise<BackupManifest> {
  let text: string;
  try {
    text = await readFile(`${dir}/${MANIFEST}`, "utf8");
  } catch {
    throw new BackupError(`${dir} is not a parley backup: it has no ${MANIFEST}`);
  }
  let manifest: BackupManifest;
  try {
    manifest = JSON.parse(text) as BackupManifest;
  } catch {
    throw new BackupError(`${dir}/${MANIFEST} is damaged: it is not JSON`);
  }
  if (manifest.format !== "parley-backup" || manifest.format_version !== 1 || !Array.isArray(manifest.files)) {
    throw new BackupError(
      `${dir}/${MANIFEST} is not a parley backup manifest this version can read (format ${String(manifest.format)} ${String(manifest.format_version)})`,
    );
  }
  for (const f of manifest.files) {
    // A manifest names files inside the backup only: no absolute paths, no way out of it.
    if (typeof f.path !== "string" || f.path.startsWith("/") || f.path.split("/").some((p) => p === ".." || p === "." || p === "")) {
      throw new BackupError(`${dir}/${MANIFEST} names an unsafe path ${JSON.stringify(f.path)}`);
    }
  }
  return manifest;
}
