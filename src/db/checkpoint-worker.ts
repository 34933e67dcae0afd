// Runs SQLite WAL checkpoints on a thread of its own, with its own connection: a
// checkpoint writes pages back into the database file and fsyncs it, which would
// otherwise stall every request behind it on the server's event loop. When the WAL has
// grown past its limit, it asks the server to hold its hot writes for the one short pass
// that lets the WAL start over (checkpointer.ts).
import { Database } from "bun:sqlite";
import type { CheckpointMessage } from "./checkpointer";

declare const self: Worker;

let db: Database;
let restartAtFrames = Infinity;
let awaitingPause = false;
let truncateRequested = false;
/** A truncation waits for readers and writers this long at most; the caller tries again later. */
const TRUNCATE_BUSY_MS = 100;

/** One PASSIVE pass; the number of frames in the WAL, or null when the database was busy. */
function checkpoint(): number | null {
  try {
    const result = db.query<{ busy: number; log: number }, []>("PRAGMA wal_checkpoint(PASSIVE)").get();
    return result && !result.busy ? result.log : null;
  } catch {
    return null; // Busy: the next tick tries again.
  }
}

/** Every frame into the database and the WAL file cut to zero bytes; false when busy. */
function truncate(): boolean {
  db.exec(`PRAGMA busy_timeout = ${TRUNCATE_BUSY_MS}`);
  try {
    return db.query<{ busy: number }, []>("PRAGMA wal_checkpoint(TRUNCATE)").get()?.busy === 0;
  } catch {
    return false;
  } finally {
    db.exec("PRAGMA busy_timeout = 5000");
  }
}

const post = (message: CheckpointMessage) => self.postMessage(message);

function pauseWrites(): void {
  if (awaitingPause) return;
  awaitingPause = true;
  post({ type: "pause-writes" });
}

self.onmessage = (event: MessageEvent<CheckpointMessage>) => {
  const message = event.data;
  if (message.type === "start") {
    db = new Database(message.path);
    db.exec("PRAGMA busy_timeout = 5000");
    restartAtFrames = message.restartAtFrames;
    setInterval(() => {
      if (awaitingPause) return;
      const frames = checkpoint();
      if (frames !== null && frames >= restartAtFrames) pauseWrites();
    }, message.everyMs);
  } else if (message.type === "truncate-wal") {
    // In a write pause too: the server's hot writes wait in memory, not in SQLite's busy handler.
    truncateRequested = true;
    pauseWrites();
  } else if (message.type === "writes-paused") {
    // Only the frames written since the last pass are left to copy.
    if (truncateRequested) {
      truncateRequested = false;
      post({ type: "wal-truncated", ok: truncate() });
    } else {
      checkpoint();
    }
    awaitingPause = false;
    post({ type: "caught-up" });
  }
};
