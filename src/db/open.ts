import { Database } from "bun:sqlite";
import * as sqliteVec from "sqlite-vec";

/** Opens the appliance database with the pragmas every connection needs and sqlite-vec loaded. */
export function openDatabase(path: string): Database {
  const db = new Database(path, { create: true, strict: true });
  // WAL lets readers run beside the one writer; NORMAL sync is crash-safe under WAL
  // (a power cut may lose the last commits, never corrupt the file).
  db.exec("PRAGMA journal_mode = WAL");
  db.exec("PRAGMA synchronous = NORMAL");
  db.exec("PRAGMA foreign_keys = ON");
  db.exec("PRAGMA busy_timeout = 5000");
  db.exec("PRAGMA temp_store = MEMORY");
  db.exec("PRAGMA cache_size = -32000");
  sqliteVec.load(db);
  return db;
}
