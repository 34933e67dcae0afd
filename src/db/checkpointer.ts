import type { Database } from "bun:sqlite";
import type { Logger } from "../log";
import { bundled } from "./bundled";
import type { GroupCommitter } from "./group-commit";

/** Past this many frames (16 MB of 4 KB pages) the checkpointer asks for a short write pause so the WAL can start over. */
const RESTART_WAL_AT_FRAMES = 4096;
/** Group commits wait at most this long for the checkpointer to catch up; past it they go on and the WAL grows for another round. */
const MAX_WRITE_PAUSE_MS = 250;
/** When the WAL starts over, its file is cut back to this size (it grew past it while it could not start over). */
const WAL_FILE_LIMIT_BYTES = 64 * 1024 * 1024;

/** Messages between the server's connection and the checkpoint worker (checkpoint-worker.ts). */
export type CheckpointMessage =
  | { type: "start"; path: string; everyMs: number; restartAtFrames: number }
  | { type: "pause-writes" }
  | { type: "writes-paused" }
  | { type: "caught-up" }
  | { type: "truncate-wal" }
  | { type: "wal-truncated"; ok: boolean };

/** A connection's WAL file, one per Deps (boot.ts): emptied by the checkpoint worker while one runs, else by the connection. */
export class Wal {
  /** Set by checkpointInBackground while its worker runs. */
  viaWorker: (() => Promise<boolean>) | null = null;

  constructor(private readonly db: Database) {}

  /**
   * Checkpoints every frame and cuts the WAL file to zero bytes, so no page image written
   * before now survives in it (an erasure, decision 078). With a background checkpointer the
   * worker does it during a write pause, off the event loop; without one (CLI, tests) the
   * connection does it itself. False when a reader or writer kept it from finishing: try later.
   */
  async truncate(): Promise<boolean> {
    if (this.viaWorker) return this.viaWorker();
    const result = this.db.query<{ busy: number }, []>("PRAGMA wal_checkpoint(TRUNCATE)").get();
    return result?.busy === 0;
  }
}

/** The connection a checkpointer works for, with its committer and WAL (the Deps' own). */
export type CheckpointedDb = { db: Database; groupCommit: GroupCommitter; wal: Wal };

/**
 * For the long-running server: turns off the connection's automatic WAL checkpoints
 * (they fsync on the event loop, measured as a 30+ ms p99 tail on heartbeats) and runs
 * them every second from a worker thread instead. Short CLI processes keep SQLite's
 * automatic checkpoints.
 *
 * Under writes without pause a background checkpoint never catches up, and the WAL
 * only starts over when one has: it grew by ~50 MB a second under the heartbeat bench.
 * So once it holds RESTART_WAL_AT_FRAMES, the worker asks the server to hold its group
 * commits (the hot writes) while it copies the last few frames, a few milliseconds;
 * the next write then starts the WAL over (decision 008).
 */
export function checkpointInBackground(
  { db, groupCommit: writes, wal }: CheckpointedDb,
  path: string,
  log: Logger,
  options: { everyMs?: number; restartAtFrames?: number } = {},
): { stop(): void } {
  // In the executable the worker is an entrypoint of its own, named from the source root.
  const script = bundled ? "./db/checkpoint-worker.ts" : new URL("./checkpoint-worker.ts", import.meta.url).href;
  const worker = new Worker(script);
  let pauseLimit: Timer | undefined;
  const resumeWrites = () => {
    clearTimeout(pauseLimit);
    writes.resume();
  };
  let truncations: ((ok: boolean) => void)[] = [];
  const settleTruncations = (ok: boolean) => {
    for (const settle of truncations.splice(0)) settle(ok);
  };
  wal.viaWorker = () => {
    worker.postMessage({ type: "truncate-wal" } satisfies CheckpointMessage);
    return new Promise((resolve) => truncations.push(resolve));
  };
  const detach = () => {
    wal.viaWorker = null;
    settleTruncations(false);
  };
  db.exec("PRAGMA wal_autocheckpoint = 0");
  db.exec(`PRAGMA journal_size_limit = ${WAL_FILE_LIMIT_BYTES}`);
  worker.addEventListener("error", (event) => {
    log.error("WAL checkpoint worker failed; the connection checkpoints by itself again", { error: event.message });
    detach();
    resumeWrites();
    db.exec("PRAGMA wal_autocheckpoint = 1000");
  });
  worker.addEventListener("message", (event: MessageEvent<CheckpointMessage>) => {
    if (event.data.type === "pause-writes") {
      // Between two tasks of the event loop, so no transaction of this connection is open.
      writes.pause();
      pauseLimit = setTimeout(resumeWrites, MAX_WRITE_PAUSE_MS);
      worker.postMessage({ type: "writes-paused" } satisfies CheckpointMessage);
    } else if (event.data.type === "caught-up") {
      resumeWrites();
    } else if (event.data.type === "wal-truncated") {
      settleTruncations(event.data.ok);
    }
  });
  worker.postMessage({
    type: "start",
    path,
    everyMs: options.everyMs ?? 1000,
    restartAtFrames: options.restartAtFrames ?? RESTART_WAL_AT_FRAMES,
  } satisfies CheckpointMessage);
  return {
    stop() {
      worker.terminate();
      detach();
      resumeWrites();
      db.exec("PRAGMA wal_autocheckpoint = 1000");
    },
  };
}
