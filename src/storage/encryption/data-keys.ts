import type { Database } from "bun:sqlite";
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import type { MasterKey } from "./master-key";
import { MasterKeyError } from "./master-key";

type Row = { project_id: string; wrapped_key: Uint8Array; master_key_id: string };

/** A data key sealed under the master key: nonce (12) | ciphertext (32) | tag (16); bound to its project by the AAD. */
function wrap(master: MasterKey, projectId: string, dataKey: Buffer): Buffer {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", master.key, iv);
  cipher.setAAD(Buffer.from(projectId));
  return Buffer.concat([iv, cipher.update(dataKey), cipher.final(), cipher.getAuthTag()]);
}

function unwrap(master: MasterKey, row: Row): Buffer {
  if (row.master_key_id !== master.id) {
    throw new MasterKeyError(
      `the data key of project ${row.project_id} is wrapped by master key ${row.master_key_id}, not by the configured ${master.id}: set PARLEY_MASTER_KEY_FILE to that key (or PARLEY_SECRET / secret.key as it was)`,
    );
  }
  const sealed = Buffer.from(row.wrapped_key);
  const decipher = createDecipheriv("aes-256-gcm", master.key, sealed.subarray(0, 12));
  decipher.setAAD(Buffer.from(row.project_id));
  decipher.setAuthTag(sealed.subarray(sealed.length - 16));
  return Buffer.concat([decipher.update(sealed.subarray(12, sealed.length - 16)), decipher.final()]);
}

/**
 * Per-project AES-256 data keys (decision 105), kept wrapped by the master key in
 * `data_keys` and unwrapped in memory on first use. Deleting a project's row (its project
 * row cascades to it) destroys the only copy: its audio can no longer be read anywhere,
 * backups and S3 buckets included.
 */
export class DataKeys {
  private readonly cache = new Map<string, Buffer>();
  constructor(
    private readonly db: Database,
    private readonly master: MasterKey,
  ) {}

  /** The project's data key, made on its first object; two writers at once end up with the same one. */
  keyFor(projectId: string, now: Date): Buffer {
    const known = this.existing(projectId);
    if (known) return known;
    this.db
      .query("INSERT OR IGNORE INTO data_keys (project_id, wrapped_key, master_key_id, created_at) VALUES (?, ?, ?, ?)")
      .run(projectId, wrap(this.master, projectId, randomBytes(32)), this.master.id, now.toISOString());
    return this.existing(projectId)!;
  }

  /**
   * Makes the keys projects lack, at start: a project's first upload then needs no database
   * write of its own (which a full disk would refuse before the audio volume is even asked).
   * Best effort: a server on a full disk still starts, and keyFor makes the key later.
   */
  ensureForAllProjects(now: Date): void {
    try {
      for (const { id } of this.db.query<{ id: string }, []>("SELECT id FROM projects WHERE id NOT IN (SELECT project_id FROM data_keys)").all())
        this.keyFor(id, now);
    } catch {
      // SQLITE_FULL, or a read-only database: keyFor tries again on the project's first object.
    }
  }

  /**
   * The project's data key, or null when it has none (never wrote an object, or was
   * destroyed). A cached key is used only while its row is still there: deleting the project
   * (from the CLI, another process) ends this server's reads of its audio at once (decision 107).
   */
  existing(projectId: string): Buffer | null {
    const cached = this.cache.get(projectId);
    if (cached && this.db.query("SELECT 1 FROM data_keys WHERE project_id = ?").get(projectId)) return cached;
    this.cache.delete(projectId);
    const row = this.db.query<Row, [string]>("SELECT project_id, wrapped_key, master_key_id FROM data_keys WHERE project_id = ?").get(projectId);
    if (!row) return null;
    const key = unwrap(this.master, row);
    this.cache.set(projectId, key);
    return key;
  }

  /** Fails fast, at start, when some data key is wrapped by another master key than the configured one. */
  checkMaster(): void {
    const other = this.db
      .query<{ master_key_id: string; n: number }, [string]>(
        "SELECT master_key_id, count(*) AS n FROM data_keys WHERE master_key_id != ? GROUP BY master_key_id",
      )
      .get(this.master.id);
    if (other)
      throw new MasterKeyError(
        `${other.n} project data key(s) are wrapped by master key ${other.master_key_id}, but the configured master key is ${this.master.id}: set PARLEY_MASTER_KEY_FILE to the key they were wrapped with`,
      );
  }
}

/**
 * `parley keys rotate-master`: every data key unwrapped with `from` and wrapped with `to`,
 * in one transaction; no audio is re-encrypted. Returns how many keys were re-wrapped.
 */
export function rewrapDataKeys(db: Database, from: MasterKey, to: MasterKey): number {
  return db.transaction(() => {
    const rows = db.query<Row, []>("SELECT project_id, wrapped_key, master_key_id FROM data_keys").all();
    for (const row of rows) {
      db.query("UPDATE data_keys SET wrapped_key = ?, master_key_id = ? WHERE project_id = ?").run(
        wrap(to, row.project_id, unwrap(from, row)),
        to.id,
        row.project_id,
      );
    }
    return rows.length;
  })();
}
