import type { Database } from "bun:sqlite";
import type { Logger } from "../log";
import { bundled } from "./bundled";

/**
 * WAL size, in pages (~40 MB), at which the writer's connection checkpoints by itself.
 * Ten times SQLite's default: at 1000 pages the heartbeat bench's p99 was ~3 ms worse
 * (an fsync on the event loop four times a second); at 10,000 it was as without one.
 */
export const WRITER_CHECKPOINT_PAGES = 10_000;

/**
 * For the long-running server: WAL checkpoints run every second from a worker thread
 * with its own connection, because a checkpoint fsyncs and on the event loop it was a
 * 30+ ms p99 tail on heartbeats. The writer keeps its own automatic checkpoint as a
 * backstop: a PASSIVE checkpoint on another connection does not catch up with a writer
 * that commits during each pass (a fleet heartbeating a few hundred times a second
 * does), and only one that caught up lets the next commit start the WAL over. Without
 * the backstop the WAL grew by 16 MB a second under the heartbeat bench, without limit
 * (decision 008); with it, the writer only copies what the worker has not yet.
 * Short CLI processes keep SQLite's automatic checkpoints alone.
 */
export function checkpointInBackground(db: Database, path: string, log: Logger, everyMs = 1000): { stop(): void } {
  // In the executable the worker is an entrypoint of its own, named from the source root.
  const script = bundled ? "./db/checkpoint-worker.ts" : new URL("./checkpoint-worker.ts", import.meta.url).href;
  const worker = new Worker(script);
  worker.addEventListener("error", (event) => {
    log.error("WAL checkpoint worker failed; only the writer's own checkpoints remain", { error: event.message });
  });
  worker.postMessage({ path, everyMs });
  db.exec(`PRAGMA wal_autocheckpoint = ${WRITER_CHECKPOINT_PAGES}`);
  return { stop: () => worker.terminate() };
}
