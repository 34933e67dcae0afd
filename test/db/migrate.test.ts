import { describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { openDatabase } from "../../src/db/open";
import { migrate, MIGRATIONS_DIR, readMigrations } from "../../src/db/migrate";
import { makeTempDir } from "../helpers";

describe("database", () => {
  test("opens in WAL mode with foreign keys and sqlite-vec loaded", () => {
    const db = openDatabase(join(makeTempDir(), "x.db"));
    expect((db.query("PRAGMA journal_mode").get() as any).journal_mode).toBe("wal");
    expect((db.query("PRAGMA foreign_keys").get() as any).foreign_keys).toBe(1);
    expect((db.query("SELECT vec_version() AS v").get() as any).v).toMatch(/^v0\./);
  });

  test("the real migrations apply once and are recorded", () => {
    const db = openDatabase(join(makeTempDir(), "x.db"));
    const applied = migrate(db);
    expect(applied[0]).toBe("0001_init.sql");
    expect(migrate(db)).toEqual([]);
    const recorded = (db.query("SELECT name FROM schema_migrations ORDER BY name").all() as { name: string }[]).map((r) => r.name);
    expect(recorded).toEqual(applied);
    expect(MIGRATIONS_DIR.endsWith("migrations")).toBe(true);
  });

  test("a failing migration leaves the database as it was", () => {
    const dir = makeTempDir();
    mkdirSync(join(dir, "m"));
    writeFileSync(join(dir, "m", "0001_a.sql"), "CREATE TABLE a (x);");
    writeFileSync(join(dir, "m", "0002_b.sql"), "CREATE TABLE b (x); THIS IS NOT SQL;");
    const db = openDatabase(join(dir, "x.db"));
    expect(() => migrate(db, readMigrations(join(dir, "m")))).toThrow();
    expect(db.query("SELECT name FROM sqlite_master WHERE name IN ('a', 'b')").all()).toEqual([]);
    expect(db.query("SELECT COUNT(*) AS n FROM schema_migrations").get()).toEqual({ n: 0 });
  });
});
