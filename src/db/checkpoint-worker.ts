// Runs SQLite WAL checkpoints on a thread of its own, with its own connection: a
// checkpoint writes pages back into the database file and fsyncs it, which would
// otherwise stall every request behind it on the server's event loop.
import { Database } from "bun:sqlite";

declare const self: Worker;

self.onmessage = (event: MessageEvent<{ path: string; everyMs: number }>) => {
  const db = new Database(event.data.path);
  db.exec("PRAGMA busy_timeout = 5000");
  setInterval(() => {
    try {
      db.exec("PRAGMA wal_checkpoint(PASSIVE)");
    } catch {
      // Busy: the next tick tries again.
    }
  }, event.data.everyMs);
};
