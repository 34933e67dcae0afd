import { expect, test } from "bun:test";
import { join } from "node:path";
import { durableTransaction } from "../../src/db/durable";
import { openDatabase } from "../../src/db/open";
import { makeTempDir } from "../helpers";

const synchronous = (db: ReturnType<typeof openDatabase>) => (db.query("PRAGMA synchronous").get() as { synchronous: number }).synchronous;

test("a durable transaction commits with synchronous = FULL and leaves the connection at NORMAL, also when it throws", () => {
  const db = openDatabase(join(makeTempDir(), "d.db"));
  db.exec("CREATE TABLE t (x INTEGER)");
  expect(synchronous(db)).toBe(1);
  const seen = durableTransaction(db, () => {
    db.query("INSERT INTO t VALUES (1)").run();
    return synchronous(db);
  });
  expect(seen).toBe(2);
  expect(synchronous(db)).toBe(1);
  expect(() =>
    durableTransaction(db, () => {
      db.query("INSERT INTO t VALUES (2)").run();
      throw new Error("rolled back");
    }),
  ).toThrow("rolled back");
  expect(synchronous(db)).toBe(1);
  expect(db.query("SELECT COUNT(*) AS n FROM t").get()).toEqual({ n: 1 });
});
