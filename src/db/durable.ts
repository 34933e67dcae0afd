import type { Database } from "bun:sqlite";

/**
 * Runs `fn` in a transaction whose commit is on disk before it returns: the connection
 * runs with synchronous = NORMAL (a power cut may undo the last commits, never corrupt),
 * which is right for heartbeats but not for a commit a client acts on by deleting its
 * only copy (an acknowledged upload). bun:sqlite is synchronous, so nothing else commits
 * on this connection between the two pragma changes.
 */
export function durableTransaction<T>(db: Database, fn: () => T): T {
  db.exec("PRAGMA synchronous = FULL");
  try {
    return db.transaction(fn)();
  } finally {
    db.exec("PRAGMA synchronous = NORMAL");
  }
}
