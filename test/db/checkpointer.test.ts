import { Database } from "bun:sqlite";
import { expect, test } from "bun:test";
import { closeSync, openSync, readSync, statSync } from "node:fs";
import { join } from "node:path";
import { type CheckpointedDb, checkpointInBackground, Wal } from "../../src/db/checkpointer";
import { GroupCommitter } from "../../src/db/group-commit";
import { openDatabase } from "../../src/db/open";
import { createLogger } from "../../src/log";
import { makeTempDir } from "../helpers";

/** A connection with its committer and WAL, as buildDeps makes them. */
const withWal = (db: Database): CheckpointedDb => ({ db, groupCommit: new GroupCommitter(db), wal: new Wal(db) });

test("WAL checkpoints happen on the worker thread, not on the writer's connection", async () => {
  const path = join(makeTempDir(), "c.db");
  const db = openDatabase(path);
  db.exec("CREATE TABLE t (x BLOB)");
  const checkpointer = checkpointInBackground(withWal(db), path, createLogger("silent"), { everyMs: 50 });
  // While the writer's connection holds the file exclusively the worker cannot checkpoint,
  // but the writer still could: so a file that stays the same size after the commit shows
  // the writer did not, whenever the worker's passes come. Everything written so far is
  // checkpointed first, so only the commit below could grow the file.
  db.exec("PRAGMA locking_mode = EXCLUSIVE");
  db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  const before = statSync(path).size;
  const insert = db.query("INSERT INTO t VALUES (randomblob(4000))");
  db.transaction(() => {
    for (let i = 0; i < 2000; i++) insert.run();
  })();
  // 2,000 pages is past SQLite's automatic checkpoint (1,000): the 8 MB sit in the WAL.
  expect(statSync(path).size).toBe(before);
  // Released at the connection's next read; then the worker's pass copies them.
  db.exec("PRAGMA locking_mode = NORMAL");
  db.query("SELECT 1 FROM t LIMIT 1").get();
  while (statSync(path).size < before + 7_000_000) await Bun.sleep(20);
  checkpointer.stop();
  db.close();
});

/** The WAL header's checkpoint sequence number: it goes up by one each time the WAL starts over. */
function walSequence(path: string): number {
  const header = new Uint8Array(16);
  const fd = openSync(`${path}-wal`, "r");
  readSync(fd, header, 0, 16, 0);
  closeSync(fd);
  return new DataView(header.buffer).getUint32(12);
}

test("under writes without pause the WAL still starts over: group commits wait while the worker copies the last frames", async () => {
  const path = join(makeTempDir(), "r.db");
  const db = openDatabase(path);
  db.exec("CREATE TABLE t (x BLOB)");
  const conn = withWal(db);
  const checkpointer = checkpointInBackground(conn, path, createLogger("silent"), { everyMs: 20, restartAtFrames: 64 });
  const insert = db.query("INSERT INTO t VALUES (randomblob(4000))");
  const writes = conn.groupCommit;
  // One write after another, each as soon as the last committed: a background pass never
  // finds the WAL still, so without the pause the WAL would never start over and every row
  // would stay in it (this loop would run until the test times out).
  const first = walSequence(path);
  let rows = 0;
  while (walSequence(path) < first + 3) {
    for (let i = 0; i < 100; i++) await writes.run(() => insert.run());
    rows += 100;
  }
  expect(db.query<{ n: number }, []>("SELECT count(*) AS n FROM t").get()!.n).toBe(rows);
  checkpointer.stop();
  db.close();
});

test("the worker empties the WAL file on request, and says so; a reader in the way makes it say it could not", async () => {
  const path = join(makeTempDir(), "e.db");
  const db = openDatabase(path);
  db.exec("CREATE TABLE t (x TEXT)");
  const conn = withWal(db);
  const checkpointer = checkpointInBackground(conn, path, createLogger("silent"), { everyMs: 60_000 });
  db.query("INSERT INTO t VALUES ('erased soon')").run();
  const reader = new Database(path);
  reader.exec("BEGIN");
  reader.query("SELECT count(*) FROM t").get();
  expect(await conn.wal.truncate()).toBe(false);
  expect(statSync(`${path}-wal`).size).toBeGreaterThan(0);
  reader.exec("COMMIT");
  expect(await conn.wal.truncate()).toBe(true);
  expect(statSync(`${path}-wal`).size).toBe(0);
  reader.close();
  checkpointer.stop();
  db.close();
});
