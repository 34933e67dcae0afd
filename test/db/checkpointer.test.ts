import { expect, test } from "bun:test";
import { statSync } from "node:fs";
import { join } from "node:path";
import { checkpointInBackground } from "../../src/db/checkpointer";
import { openDatabase } from "../../src/db/open";
import { createLogger } from "../../src/log";
import { makeTempDir } from "../helpers";

test("WAL checkpoints happen on the worker thread, not on the writer's connection", async () => {
  const path = join(makeTempDir(), "c.db");
  const db = openDatabase(path);
  const checkpointer = checkpointInBackground(db, path, createLogger("silent"), 50);
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
