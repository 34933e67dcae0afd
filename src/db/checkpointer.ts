import type { Database } from "bun:sqlite";
import type { Logger } from "../log";
import { bundled } from "./bundled";

/**
 * For the long-running server: turns off the connection's automatic WAL checkpoints
 * (they fsync on the event loop, measured as a 30+ ms p99 tail on heartbeats) and runs
 * them every second from a worker thread instead. Short CLI processes keep SQLite's
 * automatic checkpoints.
 */
export function checkpointInBackground(db: Database, path: string, log: Logger, everyMs = 1000): { stop(): void } {
  // In the executable the worker is an entrypoint of its own, named from the source root.
  const script = bundled ? "./db/checkpoint-worker.ts" : new URL("./checkpoint-worker.ts", import.meta.url).href;
  const worker = new Worker(script);
  db.exec("PRAGMA wal_autocheckpoint = 0");
  worker.addEventListener("error", (event) => {
    log.error("WAL checkpoint worker failed; the connection checkpoints by itself again", { error: event.message });
    db.exec("PRAGMA wal_autocheckpoint = 1000");
  });
  worker.postMessage({ path, everyMs });
  return {
    stop() {
      worker.terminate();
      db.exec("PRAGMA wal_autocheckpoint = 1000");
    },
  };
}
