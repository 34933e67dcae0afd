import { Database } from "bun:sqlite";
import { existsSync, readdirSync } from "node:fs";
import { mkdir, rename, rm, stat, writeFile } from "node:fs/promises";
import { basename, dirname, join, relative, resolve } from "node:path";
import type { Config } from "../config";
import { openDatabase } from "../db/open";
import { PARLEY_VERSION } from "../version";
import { type BackupFile, BackupError, type BackupManifest, copyHashed, hashFile, MANIFEST } from "./backup-files";
import { syncPath } from "../storage/fsync";
import { autoCertificatePaths } from "../tls/auto-certificate";

/** Rounds of snapshot-then-copy before objects still missing are taken as really missing. */
const MAX_ROUNDS = 5;

/** The files outside the database that a snapshot refers to, as paths relative to the data dir. */
function referencedFiles(snapshotPath: string, audioIncluded: boolean): string[] {
  const db = new Database(snapshotPath, { readonly: true });
  try {
    const audio = audioIncluded
      ? db
          .query<{ key: string }, []>(
            `SELECT storage_key AS key FROM recordings WHERE storage_key IS NOT NULL
             UNION SELECT storage_key FROM recording_chunks
             UNION SELECT storage_key FROM recording_uploads WHERE storage_key IS NOT NULL`,
          )
          .all()
          .map((r) => `audio/${r.key}`)
      : [];
    const firmware = db
      .query<{ id: string }, []>("SELECT id FROM firmware_releases")
      .all()
      .map((r) => `firmware/${r.id}.bin`);
    return [...audio, ...firmware].sort();
  } finally {
    db.close();
  }
}

function lastMigration(snapshotPath: string): string | null {
  const db = new Database(snapshotPath, { readonly: true });
  try {
    return db.query<{ name: string }, []>("SELECT max(name) AS name FROM schema_migrations").get()?.name ?? null;
  } finally {
    db.close();
  }
}

export type BackupResult = { path: string; manifest: BackupManifest; rounds: number };

/**
 * Backs up a data dir to `target` while a server may be serving from it (decision 087):
 * a consistent snapshot of the database (VACUUM INTO on a connection of our own), then
 * the audio and firmware files that snapshot refers to. Stored objects never change
 * under their key, so a copy made after the snapshot is the object the snapshot names;
 * one the server removed meanwhile (a deletion, chunks assembled into the original)
 * sends us round again with a new snapshot, and only what the last one names is kept.
 * Everything is written into `<target>.partial-<pid>` and renamed to `target` at the end.
 */
export async function backupDataDir(config: Config, target: string, now: () => Date): Promise<BackupResult> {
  const dbPath = join(config.dataDir, "parley.db");
  if (!existsSync(dbPath)) throw new BackupError(`${config.dataDir} has no database (parley.db): nothing to back up`);
  const finalPath = resolve(target);
  if (existsSync(finalPath) && readdirSync(finalPath).length > 0) throw new BackupError(`${finalPath} exists and is not empty: back up into a new folder`);
  process.umask(0o077);
  await mkdir(dirname(finalPath), { recursive: true, mode: 0o700 });
  const staging = join(dirname(finalPath), `.${basename(finalPath)}.partial-${process.pid}`);
  await rm(staging, { recursive: true, force: true });
  await mkdir(staging, { mode: 0o700 });
  try {
    const result = await writeBackup(config, dbPath, staging, now);
    await writeFile(join(staging, MANIFEST), `${JSON.stringify(result.manifest, null, 2)}\n`, { mode: 0o600 });
    await syncPath(staging);
    await rename(staging, finalPath);
    await syncPath(dirname(finalPath));
    return { path: finalPath, ...result };
  } catch (err) {
    await rm(staging, { recursive: true, force: true });
    throw err;
  }
}

async function writeBackup(config: Config, dbPath: string, staging: string, now: () => Date): Promise<{ manifest: BackupManifest; rounds: number }> {
  const audioIncluded = !config.s3;
  const snapshot = join(staging, "parley.db");
  const copied = new Map<string, BackupFile>();
  let missing: string[] = [];
  let rounds = 0;
  const db = openDatabase(dbPath);
  try {
    for (let previous: string[] | null = null; rounds < MAX_ROUNDS; previous = missing) {
      rounds++;
      await rm(snapshot, { force: true });
      db.exec(`VACUUM INTO '${snapshot.replaceAll("'", "''")}'`);
      const wanted = referencedFiles(snapshot, audioIncluded);
      const wantedSet = new Set(wanted);
      // Copies of an earlier round that this snapshot no longer names (a deleted recording) go.
      for (const path of [...copied.keys()].filter((p) => !wantedSet.has(p))) {
        copied.delete(path);
        await rm(join(staging, path), { force: true });
      }
      missing = [];
      for (const path of wanted) {
        const source = join(config.dataDir, path);
        const have = copied.get(path);
        if (have && (await stat(source).catch(() => null))?.size === have.size) continue;
        const file = await copyHashed(source, join(staging, path));
        if (file) copied.set(path, { path, ...file });
        else missing.push(path);
      }
      // Missing twice in a row, from two snapshots: storage lost them, not the server meanwhile.
      if (missing.length === 0 || (previous && missing.join("\n") === previous.join("\n"))) break;
    }
  } finally {
    db.close();
  }
  const dbFile = await hashFile(snapshot);
  const files: BackupFile[] = [{ path: "parley.db", ...dbFile! }];
  let secret: BackupManifest["secret"] = "none";
  if (config.secret) secret = "environment";
  else {
    const key = await copyHashed(join(config.dataDir, "secret.key"), join(staging, "secret.key"));
    if (key) {
      files.push({ path: "secret.key", ...key });
      secret = "file";
    }
  }
  // PARLEY_TLS=auto's key and certificate: an appliance restored on new hardware keeps the fingerprint its devices pin.
  const tls = autoCertificatePaths(config.dataDir);
  for (const path of [tls.key, tls.cert].map((p) => relative(config.dataDir, p))) {
    const file = await copyHashed(join(config.dataDir, path), join(staging, path));
    if (file) files.push({ path, ...file });
  }
  files.push(...[...copied.values()].sort((a, b) => a.path.localeCompare(b.path)));
  const manifest: BackupManifest = {
    format: "parley-backup",
    format_version: 1,
    parley_version: PARLEY_VERSION,
    created_at: now().toISOString(),
    schema: lastMigration(snapshot),
    audio: audioIncluded
      ? { storage: "local" }
      : {
          storage: "s3",
          bucket: config.s3!.bucket,
          note: "the audio stays in the S3 bucket and is not in this backup: back the bucket up with its own tools (versioning or replication)",
        },
    secret,
    files,
    missing_objects: missing.map((p) => p.replace(/^audio\//, "")),
  };
  return { manifest, rounds };
}
