import { expect, test } from "bun:test";
import { statSync } from "node:fs";
import { join } from "node:path";
import { checkpointInBackground } from "../../src/db/checkpointer";
import { groupCommit } from "../../src/db/group-commit";
import { openDatabase } from "../../src/db/open";
import { createLogger } from "../../src/log";
import { makeTempDir } from "../helpers";

test("WAL checkpoints happen on the worker thread, not on the writer's connection", async () => {
  const path = join(makeTempDir(), "c.db");
  const db = openDatabase(path);
  const checkpointer = checkpointInBackground(db, path, createLogger("silent"), { everyMs: 50 });
  db.exec("CREATE TABLE t (x BLOB)");
  const before = statSync(path).size;
  const insert = db.query("INSERT INTO t VALUES (randomblob(4000))");
  db.transaction(() => {
    for (let i = 0; i < 2000; i++) insert.run();
  })();
  // The writer no longer checkpoints by itself: the 8 MB sit in the WAL.
  expect(statSync(path).size).toBe(before);
  let after = before;
  for (let i = 0; i < 40 && after === before; i++) {
    await Bun.sleep(50);
    after = statSync(path).size;
  }
  expect(after).toBeGreaterThan(before + 7_000_000);
  checkpointer.stop();
  db.close();
});

test("under writes without pause the WAL still starts over: group commits wait while the worker copies the last frames", async () => {
  const path = join(makeTempDir(), "r.db");
  const db = openDatabase(path);
  db.exec("CREATE TABLE t (x BLOB)");
  const checkpointer = checkpointInBackground(db, path, createLogger("silent"), { everyMs: 20, restartAtFrames: 64 });
  const insert = db.query("INSERT INTO t VALUES (randomblob(4000))");
  const writes = groupCommit(db);
  // One write after another, each as soon as the last committed: a background pass never
  // finds the WAL still, so without the pause every row would stay in it (over 120 MB).
  let largestWal = 0;
  for (let row = 1; row <= 30_000; row++) {
    await writes.run(() => insert.run());
    if (row % 500 === 0) largestWal = Math.max(largestWal, statSync(`${path}-wal`).size);
  }
  expect(largestWal).toBeLessThan(40_000_000);
  expect(db.query<{ n: number }, []>("SELECT count(*) AS n FROM t").get()!.n).toBe(30_000);
  checkpointer.stop();
  db.close();
});
