import { Database } from "bun:sqlite";

/**
 * An exclusive lock on the file at `path`, held by the connection returned until it is closed,
 * or null when another process or connection holds it. SQLite's own write lock, kept by
 * locking_mode EXCLUSIVE: an fcntl lock, which the kernel drops when the process dies, however
 * it dies (decision 079). The file holds no data.
 */
export function holdFileLock(path: string): Database | null {
  const db = new Database(path, { create: true });
  try {
    db.exec("PRAGMA locking_mode = EXCLUSIVE");
    db.exec("PRAGMA journal_mode = MEMORY"); // no journal file beside it
    db.exec("BEGIN EXCLUSIVE");
    db.exec("COMMIT");
    return db;
  } catch (err) {
    db.close();
    if ((err as { code?: string }).code === "SQLITE_BUSY") return null;
    throw err;
  }
}
