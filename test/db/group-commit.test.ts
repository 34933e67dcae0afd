import { beforeEach, describe, expect, test } from "bun:test";
import type { Database } from "bun:sqlite";
import { join } from "node:path";
import { GroupCommitter } from "../../src/db/group-commit";
import { openDatabase } from "../../src/db/open";
import { makeTempDir } from "../helpers";

let db: Database;
let committer: GroupCommitter;
let reader: Database;
const rows = (conn: Database) =>
  conn
    .query<{ name: string }, []>("SELECT name FROM t ORDER BY name")
    .all()
    .map((r) => r.name);
const insert = (name: string) => db.query("INSERT INTO t (name) VALUES (?)").run(name);

beforeEach(() => {
  const path = join(makeTempDir(), "g.db");
  db = openDatabase(path);
  committer = new GroupCommitter(db);
  db.exec("CREATE TABLE parent (id TEXT PRIMARY KEY)");
  db.exec("CREATE TABLE t (name TEXT, parent_id TEXT REFERENCES parent(id) DEFERRABLE INITIALLY DEFERRED)");
  reader = openDatabase(path);
});

describe("group commit", () => {
  test("units submitted in one turn share one transaction: another connection sees none of them until the commit", async () => {
    const commit = (work: () => unknown) => committer.run(work);
    const seenByReader: string[][] = [];
    const first = commit(() => insert("a"));
    const second = commit(() => {
      seenByReader.push(rows(reader));
      insert("b");
    });
    await Promise.all([first, second]);
    expect(seenByReader).toEqual([[]]);
    expect(rows(reader)).toEqual(["a", "b"]);
  });

  test("a caller's promise settles after the commit", async () => {
    const seen = await committer.run(() => insert("a")).then(() => rows(reader));
    expect(seen).toEqual(["a"]);
  });

  test("a unit that throws is rolled back alone and its caller gets the error; the others commit", async () => {
    const commit = (work: () => unknown) => committer.run(work);
    const results = await Promise.allSettled([
      commit(() => insert("a")),
      commit(() => {
        insert("b");
        throw new Error("refused");
      }),
      commit(() => {
        insert("c");
        return "c written";
      }),
    ]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect((results[1] as PromiseRejectedResult).reason.message).toBe("refused");
    expect((results[2] as PromiseFulfilledResult<string>).value).toBe("c written");
    expect(rows(reader)).toEqual(["a", "c"]);
    expect(db.inTransaction).toBe(false);
  });

  test("paused, units wait in memory and nothing is written; on resume they commit", async () => {
    committer.pause();
    let settled = false;
    const pending = committer.run(() => insert("held")).then(() => (settled = true));
    await Bun.sleep(20);
    expect(settled).toBe(false);
    expect(rows(reader)).toEqual([]);
    committer.resume();
    await pending;
    expect(rows(reader)).toEqual(["held"]);
  });

  test("a failing COMMIT fails every unit of its group and keeps none of their writes", async () => {
    const commit = (work: () => unknown) => committer.run(work);
    // The deferred foreign key is only checked at COMMIT.
    const results = await Promise.allSettled([
      commit(() => insert("a")),
      commit(() => db.query("INSERT INTO t (name, parent_id) VALUES ('orphan', 'missing')").run()),
    ]);
    expect(results.map((r) => r.status)).toEqual(["rejected", "rejected"]);
    expect(String((results[0] as PromiseRejectedResult).reason)).toContain("FOREIGN KEY");
    expect(rows(reader)).toEqual([]);
    expect(db.inTransaction).toBe(false);
    // The committer goes on working after a failed group.
    await commit(() => insert("later"));
    expect(rows(reader)).toEqual(["later"]);
  });
});
