import { Database } from "bun:sqlite";
import { dirname } from "node:path";
import * as sqliteVec from "sqlite-vec";
import { RuntimeFiles } from "../runtime/files";

/**
 * In a compiled executable sqlite-vec's library is carried inside; SQLite can only load it
 * from a real file named vec0.so, so it is written out to the runtime folder of the data
 * dir the database lives in (decision 090).
 */
function loadVec(db: Database, dbPath: string): void {
  const carried = new RuntimeFiles(dirname(dbPath)).file("vec0.so");
  if (carried) db.loadExtension(carried);
  else sqliteVec.load(db);
}

/** Upper bound of the database mapped into memory; a larger file is read normally past it. */
export const MMAP_BYTES = 2 ** 31 - 2 ** 16;

/**
 * A connection whose transactions take the write lock when they begin: `db.transaction(fn)()`
 * runs BEGIN IMMEDIATE, as `.immediate()` does (decision 116). A deferred transaction that reads
 * before it writes fails at once with SQLITE_BUSY, without busy_timeout's wait, when another
 * connection committed in between (the checkpoint worker truncating the WAL after an erasure,
 * a CLI command): its snapshot is stale, and SQLite cannot move it on inside the transaction.
 * BEGIN IMMEDIATE waits its turn for the lock, then reads the latest snapshot. `.deferred()`
 * stays for a transaction that only reads.
 */
class WriteFirstDatabase extends Database {
  // The base class's signature, `any[]` included, so the override matches it.
  override transaction<A extends any[], T>(insideTransaction: (...args: A) => T) {
    const modes = super.transaction<A, T>(insideTransaction);
    return Object.assign((...args: A) => modes.immediate(...args), { deferred: modes.deferred, immediate: modes.immediate, exclusive: modes.exclusive });
  }
}

/** Opens the appliance database with the pragmas every connection needs and sqlite-vec loaded. */
export function openDatabase(path: string): Database {
  const db = new WriteFirstDatabase(path, { create: true, strict: true });
  // WAL lets readers run beside the one writer; NORMAL sync is crash-safe under WAL
  // (a power cut may lose the last commits, never corrupt the file).
  db.exec("PRAGMA journal_mode = WAL");
  db.exec("PRAGMA synchronous = NORMAL");
  db.exec("PRAGMA foreign_keys = ON");
  db.exec("PRAGMA busy_timeout = 5000");
  db.exec("PRAGMA temp_store = MEMORY");
  db.exec("PRAGMA cache_size = -32000");
  // Deleted rows are overwritten with zeros, and freed pages too, so an erased transcript
  // does not linger in free space (decision 078). Its cost is the extra writes of a delete.
  db.exec("PRAGMA secure_delete = ON");
  // Reads through a memory map instead of copies into the page cache: the vector scan of a
  // large end user touches ~150 MB per 100k chunks, and went from ~86 to ~75 ms at 100k
  // (decision 064). SQLite caps the request at its compile-time maximum (about 2 GB).
  db.exec(`PRAGMA mmap_size = ${MMAP_BYTES}`);
  loadVec(db, path);
  return db;
}
