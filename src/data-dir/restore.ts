import { readdirSync } from "node:fs";
import { mkdir, rename, rm } from "node:fs/promises";
import { join, resolve } from "node:path";
import type { Config } from "../config";
import { StartupError } from "../startup-error";
import { BackupError, type BackupManifest, copyHashed, hashFile, readManifest } from "./backup-files";
import { syncPath } from "../storage/fsync";
import { type DataDirLock, lockDataDir } from "./lock";
import { keepDataPrivate } from "./private";

/** What a data dir may hold and still count as empty: the lock of a stopped server, caches. */
const NOT_DATA = new Set(["server.lock", "server.json", ".native", "runtime"]);
const STAGING_PREFIX = ".restore-";
const REPLACED_PREFIX = ".replaced-";

/** The backup's files whose size or SHA-256 is not what its manifest says, each with why. */
export async function verifyBackup(dir: string, manifest: BackupManifest): Promise<string[]> {
  const bad: string[] = [];
  for (const f of manifest.files) {
    const actual = await hashFile(join(dir, f.path));
    if (!actual) bad.push(`${f.path}: missing`);
    else if (actual.size !== f.size) bad.push(`${f.path}: ${actual.size} bytes, the manifest says ${f.size}`);
    else if (actual.sha256 !== f.sha256) bad.push(`${f.path}: SHA-256 ${actual.sha256} does not match the manifest's ${f.sha256}`);
  }
  return bad;
}

export type RestoreResult = { manifest: BackupManifest; replacedTo: string | null };

/**
 * Restores the backup at `source` into the configured data dir (decision 087). Checks every
 * file's SHA-256 before touching anything; holds the data dir's lock (a running server
 * refuses it, and no server starts meanwhile); copies into a staging folder inside the data
 * dir (same filesystem, also when the data dir is a mounted volume) and checks each copy;
 * then moves what was there aside into `.replaced-<time>` (only with `force`) and renames
 * the restored files into place, the database last.
 */
export async function restoreDataDir(config: Config, source: string, options: { force: boolean; now: () => Date }): Promise<RestoreResult> {
  const from = resolve(source);
  const manifest = await readManifest(from);
  const bad = await verifyBackup(from, manifest);
  if (bad.length) throw new BackupError(`the backup at ${from} is damaged; nothing was restored:\n  ${bad.join("\n  ")}`);

  keepDataPrivate(config.dataDir);
  let lock: DataDirLock;
  try {
    lock = lockDataDir(config.dataDir, options.now());
  } catch (err) {
    if (err instanceof StartupError) throw new BackupError(`cannot restore while a server runs: ${err.message}`);
    throw err;
  }
  try {
    const present = readdirSync(config.dataDir).filter((n) => !NOT_DATA.has(n) && !n.startsWith(STAGING_PREFIX) && !n.startsWith(REPLACED_PREFIX));
    if (present.length && !options.force) {
      throw new BackupError(
        `${config.dataDir} already holds data (${present.join(", ")}); restore into an empty data dir, or add --force to move what is there aside into ${config.dataDir}/${REPLACED_PREFIX}<time>`,
      );
    }
    // What a restore that crashed left behind.
    for (const n of readdirSync(config.dataDir).filter((n) => n.startsWith(STAGING_PREFIX)))
      await rm(join(config.dataDir, n), { recursive: true, force: true });

    const staging = join(config.dataDir, `${STAGING_PREFIX}${process.pid}`);
    await mkdir(staging, { mode: 0o700 });
    for (const f of manifest.files) {
      const copy = await copyHashed(join(from, f.path), join(staging, f.path));
      if (copy?.sha256 !== f.sha256) throw new BackupError(`${join(from, f.path)} changed while it was restored; nothing was restored`);
    }

    let replacedTo: string | null = null;
    if (present.length) {
      replacedTo = join(config.dataDir, `${REPLACED_PREFIX}${options.now().toISOString().replace(/[:.]/g, "-")}`);
      await mkdir(replacedTo, { mode: 0o700 });
      for (const n of present) await rename(join(config.dataDir, n), join(replacedTo, n));
    }
    // The database last: until it is there, no server would take the restored files for an appliance.
    const restored = readdirSync(staging).sort((a, b) => Number(a === "parley.db") - Number(b === "parley.db"));
    for (const n of restored) await rename(join(staging, n), join(config.dataDir, n));
    await rm(staging, { recursive: true, force: true });
    await syncPath(config.dataDir);
    return { manifest, replacedTo };
  } finally {
    lock.release();
  }
}
