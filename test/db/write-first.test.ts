// Every write transaction takes the write lock when it begins (decision 116), whether it runs
// through db.transaction() or the group committer; and the source opens no other kind.
import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Glob } from "bun";
import { GroupCommitter } from "../../src/db/group-commit";
import { openDatabase } from "../../src/db/open";
import { makeTempDir } from "../helpers";

/** A database with one table, and a second connection that never waits for a lock. */
function twoConnections() {
  const path = join(makeTempDir(), "w.db");
  const db = openDatabase(path);
  db.exec("CREATE TABLE t (n INTEGER)");
  db.exec("INSERT INTO t VALUES (0)");
  const other = new Database(path);
  other.exec("PRAGMA busy_timeout = 0");
  /** Whether the other connection can write right now. */
  const otherCanWrite = () => {
    try {
      other.exec("UPDATE t SET n = n + 1");
      return true;
    } catch (err) {
      expect((err as { code?: string }).code).toBe("SQLITE_BUSY");
      return false;
    }
  };
  return { db, other, otherCanWrite };
}

describe("write transactions take the write lock up front", () => {
  test("db.transaction(fn)() holds it before its first statement (BEGIN IMMEDIATE), .deferred() does not", () => {
    const { db, otherCanWrite } = twoConnections();
    expect(db.transaction(() => otherCanWrite())()).toBe(false);
    expect(db.transaction(() => otherCanWrite()).deferred()).toBe(true);
    // A transaction inside another is a savepoint of it, as before.
    expect(db.transaction(() => db.transaction(() => db.inTransaction)())()).toBe(true);
  });

  test("what it prevents: a deferred transaction that read, then writes after another connection committed, fails at once despite busy_timeout", () => {
    const { db, other } = twoConnections();
    const started = Date.now();
    let error: { code?: string } | undefined;
    try {
      db.transaction(() => {
        db.query("SELECT n FROM t").get();
        other.exec("UPDATE t SET n = 5");
        db.exec("UPDATE t SET n = n + 1");
      }).deferred();
    } catch (err) {
      error = err as { code?: string };
    }
    expect(error?.code).toBe("SQLITE_BUSY_SNAPSHOT");
    // busy_timeout is 5 s on this connection: it was never waited.
    expect(Date.now() - started).toBeLessThan(4000);
  });

  test("a group commit holds it from its BEGIN, even for a unit that only reads", async () => {
    const { db, otherCanWrite } = twoConnections();
    const committer = new GroupCommitter(db);
    expect(await committer.run(() => otherCanWrite())).toBe(false);
  });
});

describe("the source opens no deferred write transaction", () => {
  const ROOT = join(import.meta.dir, "..", "..");
  const sources = [...new Glob("src/**/*.ts").scanSync(ROOT)].map((file) => ({ file, text: readFileSync(join(ROOT, file), "utf8") }));
  const offending = (pattern: RegExp) =>
    sources.flatMap(({ file, text }) => text.split("\n").flatMap((line, i) => (pattern.test(line) ? [`${file}:${i + 1}: ${line.trim()}`] : [])));

  test("the reader sees the source", () => {
    expect(offending(/\.transaction\(/).length).toBeGreaterThan(20);
  });

  test("no .deferred() transaction: one that reads, then writes, fails at once when another connection committed in between", () => {
    // open.ts makes immediate the default and keeps .deferred() for a transaction that only reads: none does yet.
    expect(offending(/\.deferred\(/).filter((hit) => !hit.startsWith("src/db/open.ts:"))).toEqual([]);
  });

  test("a BEGIN written out is BEGIN IMMEDIATE or BEGIN EXCLUSIVE", () => {
    expect(offending(/["'`]\s*BEGIN\b(?!\s+(?:IMMEDIATE|EXCLUSIVE)\b)/)).toEqual([]);
  });

  test("the database is opened through openDatabase only, whose transactions begin immediate", () => {
    // The others: lock files (the data dir's, scratch dirs': their own databases, BEGIN EXCLUSIVE), backups read
    // read-only, and the checkpoint worker (checkpoints only, no transaction).
    const allowed = ["src/db/open.ts", "src/db/file-lock.ts", "src/data-dir/backup.ts", "src/db/checkpoint-worker.ts"];
    expect(offending(/new Database\(/).filter((hit) => !allowed.some((file) => hit.startsWith(`${file}:`)))).toEqual([]);
  });
});
