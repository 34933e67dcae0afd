import type { Database } from "bun:sqlite";

/**
 * For the long-running server: turns off the connection's automatic WAL checkpoints
 * (they fsync on the event loop, measured as a 30+ ms p99 tail on heartbeats) and runs
 * them every second from a worker thread instead. Short CLI processes keep SQLite's
 * automatic checkpoints.
 */
export function checkpointInBackground(db: Database, path: string, everyMs = 1000): { stop(): void } {
  db.exec("PRAGMA wal_autocheckpoint = 0");
  const worker = new Worker(new URL("./checkpoint-worker.ts", import.meta.url).href);
  worker.postMessage({ path, everyMs });
  return {
    stop() {
      worker.terminate();
      db.exec("PRAGMA wal_autocheckpoint = 1000");
    },
  };
}
