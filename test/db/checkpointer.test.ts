import { expect, test } from "bun:test";
import { statSync } from "node:fs";
import { join } from "node:path";
import { checkpointInBackground, WRITER_CHECKPOINT_PAGES } from "../../src/db/checkpointer";
import { openDatabase } from "../../src/db/open";
import { createLogger } from "../../src/log";
import { makeTempDir } from "../helpers";

const PAGE = 4096;

function database() {
  const path = join(makeTempDir(), "c.db");
  const db = openDatabase(path);
  db.exec("CREATE TABLE t (x BLOB)");
  return { path, db, insert: db.query("INSERT INTO t VALUES (randomblob(4000))") };
}

test("WAL checkpoints below the backstop happen on the worker thread, not on the writer's connection", async () => {
  const { path, db, insert } = database();
  const checkpointer = checkpointInBackground(db, path, createLogger("silent"), 50);
  const before = statSync(path).size;
  db.transaction(() => {
    for (let i = 0; i < WRITER_CHECKPOINT_PAGES / 2; i++) insert.run();
  })();
  // Under the backstop the writer does not checkpoint: the 20 MB are in the WAL, not yet in
  // the file (a writer's checkpoint would have copied them all before the commit returned).
  expect(statSync(path).size).toBeLessThan(before + 10_000_000);
  const copied = () => statSync(path).size > before + (WRITER_CHECKPOINT_PAGES / 2) * 4000;
  for (let i = 0; i < 100 && !copied(); i++) await Bun.sleep(50);
  expect(copied()).toBe(true);
  checkpointer.stop();
  db.close();
});

test("a writer that never pauses still gets its WAL started over: the file stays near the backstop", () => {
  const { path, db, insert } = database();
  // The worker's first pass is a minute away: only the writer's backstop can keep the WAL small.
  const checkpointer = checkpointInBackground(db, path, createLogger("silent"), 60_000);
  // Twice the backstop in one-page commits.
  for (let i = 0; i < WRITER_CHECKPOINT_PAGES * 2; i++) insert.run();
  expect(statSync(`${path}-wal`).size).toBeLessThan(WRITER_CHECKPOINT_PAGES * PAGE * 1.2);
  checkpointer.stop();
  db.close();
});
