import { expect, test } from "bun:test";
import { join } from "node:path";
import type { Database } from "bun:sqlite";
import { migrate, MIGRATIONS_DIR, readMigrations } from "../../src/db/migrate";
import { openDatabase } from "../../src/db/open";
import { HashingTestEmbedder } from "../../src/engines/embedder.test-double";
import { DocumentCounts } from "../../src/modules/search/store";
import { vectorCandidates } from "../../src/modules/search/vector-index";
import { makeTempDir, makeTestApp } from "../helpers";
import { topicalEmbeddings } from "./search-embeddings";

const BEFORE_BITS = "0012_search_binary_vectors.sql";

/** A database as an install had it before migration 0012, with sqlite-vec's table at `dimension`. */
function databaseBeforeBits(dir: string): Database {
  const db = openDatabase(join(dir, "parley.db"));
  migrate(
    db,
    readMigrations(MIGRATIONS_DIR).filter((m) => m.name < BEFORE_BITS),
  );
  return db;
}

const insertVector = (db: Database, rowid: number, v: Float32Array) =>
  db
    .query(
      "INSERT INTO chunk_vectors (chunk_rowid, project_id, mode, end_user_id, recording_id, recorded_at, embedding) VALUES (?, 'prj_1', 'test', 'eu_1', 'rec_1', '', ?)",
    )
    .run(rowid, v);

test("migration 0012 backfills the bits of every stored vector, and the quantized scan finds what the exact one does", () => {
  const db = databaseBeforeBits(makeTempDir());
  const embed = topicalEmbeddings({ seed: 3, dimension: 384, topics: 4 });
  const vectors = Array.from({ length: 600 }, embed);
  vectors.forEach((v, i) => insertVector(db, i + 1, v));

  expect(migrate(db)).toContain(BEFORE_BITS);
  const rows = db.query("SELECT COUNT(*) AS n, SUM(embedding_bits = vec_quantize_binary(embedding)) AS same FROM chunk_vectors").get();
  expect(rows).toEqual({ n: 600, same: 600 });
  const filter = { projectId: "prj_1", mode: "test" as const, endUserId: "eu_1" };
  const store = { db, searchCounts: new DocumentCounts(db) };
  for (const v of vectors.slice(0, 5)) {
    expect(vectorCandidates(store, filter, v, 1, "quantized")).toEqual(vectorCandidates(store, filter, v, 1, "exact"));
  }
});

test("an index of another dimension is emptied by migration 0012 and re-embedded at the model's dimension", async () => {
  const dir = makeTempDir();
  const db = databaseBeforeBits(dir);
  // The state a 96-dimension model left (src/modules/search/store.ts before 0012), with two embedded chunks.
  db.exec("DROP TABLE chunk_vectors");
  db.exec(`CREATE VIRTUAL TABLE chunk_vectors USING vec0(chunk_rowid INTEGER PRIMARY KEY, project_id TEXT PARTITION KEY, mode TEXT PARTITION KEY,
    end_user_id TEXT PARTITION KEY, recording_id TEXT, recorded_at TEXT, embedding FLOAT[96])`);
  db.exec("UPDATE search_index SET model = 'test-hashing-96', dimension = 96, generation = 2");
  db.exec("PRAGMA foreign_keys = OFF");
  for (const [rowid, text] of [
    [1, "The blood pressure is high."],
    [2, "Bring boots for the hike."],
  ] as const) {
    db.query(
      `INSERT INTO chunks (rowid, id, project_id, mode, end_user_id, recording_id, transcription_id, seq, start_ms, end_ms, text, owner_token, embedded_generation, created_at)
       VALUES (?, ?, 'prj_1', 'test', 'eu_1', 'rec_1', 'txn_1', ?, 0, 30000, ?, 'o1', 2, '2026-01-01T00:00:00.000Z')`,
    ).run(rowid, `chk_${rowid}`, rowid, text);
    insertVector(db, rowid, new Float32Array(96).fill(0.1));
  }
  db.close();

  const t = await makeTestApp({ env: { PARLEY_DATA_DIR: dir }, engines: { embedder: new HashingTestEmbedder(96, "test-hashing-96") } });
  expect(t.deps.db.query("SELECT model, dimension, generation FROM search_index").get()).toEqual({ model: null, dimension: 384, generation: 3 });
  expect(t.deps.db.query("SELECT COUNT(*) AS n FROM chunk_vectors").get()).toEqual({ n: 0 });
  await t.runTask("search-check-index");
  await t.deps.queue.drain();
  expect(t.deps.db.query("SELECT model, dimension FROM search_index").get()).toEqual({ model: "test-hashing-96", dimension: 96 });
  expect(t.deps.db.query("SELECT COUNT(*) AS n FROM chunk_vectors WHERE embedding_bits = vec_quantize_binary(embedding)").get()).toEqual({ n: 2 });
  const [query] = await new HashingTestEmbedder(96).embed(["blood pressure"]);
  const filter = { projectId: "prj_1", mode: "test" as const, endUserId: "eu_1" };
  expect(vectorCandidates(t.deps, filter, query!, 1, "quantized")).toEqual([1]);
});
