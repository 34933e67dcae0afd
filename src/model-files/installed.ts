import { createHash } from "node:crypto";
import { createReadStream, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ModelFile } from "./manifest";

/**
 * What is installed, kept beside the models as installed.json: the SHA-256 measured when
 * each file was verified at install. For manifest entries whose SHA-256 upstream does not
 * publish, this record is what later `verify` runs compare against (decision 044).
 */
export type InstalledRecord = Record<string, { installed_at: string; source: "pull" | "import"; files: Record<string, { sha256: string; size: number }> }>;

const recordPath = (modelsDir: string) => join(modelsDir, "installed.json");

export function readInstalled(modelsDir: string): InstalledRecord {
  const path = recordPath(modelsDir);
  return existsSync(path) ? (JSON.parse(readFileSync(path, "utf8")) as InstalledRecord) : {};
}

/** Rewrites the record through a temporary file, so a crash never leaves it half written. */
export function writeInstalled(modelsDir: string, record: InstalledRecord): void {
  mkdirSync(modelsDir, { recursive: true });
  const tmp = `${recordPath(modelsDir)}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(record, null, 2)}\n`);
  renameSync(tmp, recordPath(modelsDir));
}

export type Digest = { sha256: string; sha1: string; size: number };

/** SHA-256 and SHA-1 of a file in one streaming pass (SHA-1 because whisper.cpp publishes only that). */
export async function hashFile(path: string, onBytes?: (n: number) => void): Promise<Digest> {
  const sha256 = createHash("sha256");
  const sha1 = createHash("sha1");
  let size = 0;
  for await (const chunk of createReadStream(path, { highWaterMark: 1024 * 1024 }) as AsyncIterable<Buffer>) {
    sha256.update(chunk);
    sha1.update(chunk);
    size += chunk.length;
    onBytes?.(chunk.length);
  }
  return { sha256: sha256.digest("hex"), sha1: sha1.digest("hex"), size };
}

export class ChecksumError extends Error {}

/**
 * Checks a file's digest against everything known about it: the manifest's size, SHA-256
 * and SHA-1, then the SHA-256 recorded at install. Throws ChecksumError on any mismatch;
 * returns false when nothing was known to compare (first install of an unpinned file).
 */
export function checkDigest(file: ModelFile, digest: Digest, recorded?: { sha256: string }): boolean {
  const fail = (what: string, expected: string | number, got: string | number) => {
    throw new ChecksumError(`${file.path}: ${what} mismatch (expected ${expected}, got ${got})`);
  };
  if (file.size !== null && file.size !== digest.size) fail("size", file.size, digest.size);
  if (file.sha256 && file.sha256 !== digest.sha256) fail("SHA-256", file.sha256, digest.sha256);
  if (file.sha1 && file.sha1 !== digest.sha1) fail("SHA-1", file.sha1, digest.sha1);
  if (recorded && recorded.sha256 !== digest.sha256) fail("SHA-256 (recorded at install)", recorded.sha256, digest.sha256);
  return Boolean(file.sha256 || file.sha1 || recorded);
}
