import type { Database } from "bun:sqlite";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { join } from "node:path";
import { holdFileLock } from "../db/file-lock";

/** The lock file in a process's scratch dir; held while the process lives. */
const LOCK = "lock";

/** Where the working files of every process on a data dir go. */
export const scratchRoot = (dataDir: string) => join(dataDir, "tmp");

/**
 * Private working files (plaintext audio ffmpeg needs as a path: an unsealed copy of a stored
 * object, an S3 object's, a live pass's window) in a dir of this process's own under
 * <dataDir>/tmp (decision 226). Not in the OS's temp dir: there a copy left by a crash (kill
 * -9, a power cut) outlived its recording's erasure, and filled a volume whose free space the
 * appliance does not watch. Each process holds a lock in its dir, as the data dir's own lock
 * does (decision 079): an fcntl lock the kernel drops when the process dies however it dies,
 * so a later process can tell a dead one's leftovers (sweepEnded) from a live one's files.
 */
export class Scratch {
  private own: { dir: string; lock: Database } | null = null;
  constructor(private readonly root: string) {}

  /** Runs `fn` with a fresh private dir, removed when it is done. */
  async withDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
    const dir = await mkdtemp(join(this.ownDir(), "w-"));
    try {
      return await fn(dir);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  /** Removes the dirs of processes that ended without removing theirs: the ones whose lock is free. */
  sweepEnded(): number {
    let removed = 0;
    for (const name of existsSync(this.root) ? readdirSync(this.root) : []) {
      const dir = join(this.root, name);
      // A dir without its lock yet is still being made (the lock is renamed in once held).
      if (dir === this.own?.dir || !existsSync(join(dir, LOCK))) continue;
      const probe = holdFileLock(join(dir, LOCK));
      if (!probe) continue;
      probe.close();
      rmSync(dir, { recursive: true, force: true });
      removed++;
    }
    return removed;
  }

  /** Releases this process's dir and what is left in it (at shutdown). */
  close(): void {
    if (!this.own) return;
    rmSync(this.own.dir, { recursive: true, force: true });
    this.own.lock.close();
    this.own = null;
  }

  private ownDir(): string {
    if (!this.own) {
      mkdirSync(this.root, { recursive: true, mode: 0o700 });
      const dir = mkdtempSync(join(this.root, `${process.pid}-`));
      // Locked under another name, then renamed: a sweep never sees the lock file before it is held.
      const lock = holdFileLock(join(dir, `${LOCK}.new`));
      if (!lock) throw new Error(`the scratch lock in ${dir} is held by another connection`);
      renameSync(join(dir, `${LOCK}.new`), join(dir, LOCK));
      this.own = { dir, lock };
    }
    return this.own.dir;
  }
}
