import type { Database } from "bun:sqlite";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { bundled } from "./bundled";

export const MIGRATIONS_DIR = join(import.meta.dir, "..", "..", "migrations");

export type Migration = { name: string; sql: string };

/** The numbered SQL files of a folder, in order. */
export function readMigrations(dir: string): Migration[] {
  return readdirSync(dir)
    .filter((f) => /^\d{4}_[\w-]+\.sql$/.test(f))
    .sort()
    .map((name) => ({ name, sql: readFileSync(join(dir, name), "utf8") }));
}

/**
 * Applies every migration not yet recorded, all in one transaction, so a failed
 * upgrade leaves the database exactly as it was. Returns the names applied.
 */
export function migrate(db: Database, migrations: Migration[] = bundled?.migrations ?? readMigrations(MIGRATIONS_DIR)): string[] {
  db.exec("CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)");
  const applied = new Set(
    db
      .query<{ name: string }, []>("SELECT name FROM schema_migrations")
      .all()
      .map((r) => r.name),
  );
  const pending = migrations.filter((m) => !applied.has(m.name));
  if (pending.length === 0) return [];
  db.transaction(() => {
    for (const { name, sql } of pending) {
      db.exec(sql);
      db.query("INSERT INTO schema_migrations (name, applied_at) VALUES (?, ?)").run(name, new Date().toISOString());
    }
  })();
  return pending.map((m) => m.name);
}
