import type { Database } from "bun:sqlite";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

export const MIGRATIONS_DIR = join(import.meta.dir, "..", "..", "migrations");

/**
 * Applies every migration in `dir` not yet recorded, all in one transaction, so a
 * failed upgrade leaves the database exactly as it was. Returns the names applied.
 */
export function migrate(db: Database, dir = MIGRATIONS_DIR): string[] {
  db.exec("CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)");
  const applied = new Set(db.query<{ name: string }, []>("SELECT name FROM schema_migrations").all().map((r) => r.name));
  const pending = readdirSync(dir)
    .filter((f) => /^\d{4}_[\w-]+\.sql$/.test(f) && !applied.has(f))
    .sort();
  if (pending.length === 0) return [];
  db.transaction(() => {
    for (const name of pending) {
      db.exec(readFileSync(join(dir, name), "utf8"));
      db.query("INSERT INTO schema_migrations (name, applied_at) VALUES (?, ?)").run(name, new Date().toISOString());
    }
  })();
  return pending;
}
