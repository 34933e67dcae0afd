import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { StartupError } from "../startup-error";
import { holdFileLock } from "../db/file-lock";

/** The running server's own lock on its data dir (decision 079). */
export type DataDirLock = {
  /** Adds the address to what a second server is told, once the first is listening. */
  listening(url: string): void;
  /** At shutdown: the next server may start on this data dir. */
  release(): void;
};

type Holder = { pid: number; url: string | null; started_at: string };

function describeHolder(infoPath: string): string {
  try {
    const h = JSON.parse(readFileSync(infoPath, "utf8")) as Holder;
    return `pid ${h.pid}, ${h.url ?? "not listening yet"}, started at ${h.started_at}`;
  } catch {
    return "pid unknown: server.json is not written yet, or could not be"; // between its lock and its first write, or a full disk
  }
}

/**
 * Takes the data dir for this process, or throws StartupError naming the server that has
 * it. The lock is SQLite's own write lock on `server.lock`, held until the connection
 * closes (locking_mode EXCLUSIVE): an fcntl lock, which the kernel drops when the process
 * dies, however it dies. Who holds it is in `server.json` (pid, address, start time), since
 * a locked database cannot be read by the one who is refused.
 */
export function lockDataDir(dataDir: string, now: Date): DataDirLock {
  const infoPath = join(dataDir, "server.json");
  const db = holdFileLock(join(dataDir, "server.lock"));
  if (!db) {
    throw new StartupError(
      `${dataDir} is in use by another parley server (${describeHolder(infoPath)}); stop that one first, or give this one its own PARLEY_DATA_DIR.`,
    );
  }
  const holder: Holder = { pid: process.pid, url: null, started_at: now.toISOString() };
  const write = () => {
    try {
      writeFileSync(infoPath, `${JSON.stringify(holder)}\n`);
    } catch {
      // A full disk must not keep the server from starting: the lock alone keeps others out.
    }
  };
  write();
  return {
    listening(url) {
      holder.url = url;
      write();
    },
    release() {
      // Before the lock goes: a server that takes it next writes its own file.
      rmSync(infoPath, { force: true });
      db.close();
    },
  };
}
