import { expect, test } from "bun:test";
import { join } from "node:path";
import { migrate } from "../../src/db/migrate";
import { openDatabase } from "../../src/db/open";
import { DocumentCounts, ownerToken } from "../../src/modules/search/store";
import { rescoredCandidates, vectorCandidates } from "../../src/modules/search/vector-index";
import { makeTempDir } from "../helpers";
import { topicalEmbeddings } from "./search-embeddings";

const CHUNKS = 2_000;
const filter = { projectId: "prj_1", mode: "test" as const, endUserId: "eu_1" };

/** A vector index of one end user's library of 50 recordings, written as storeVectors writes it (floats and their sign bits). */
function library() {
  const db = openDatabase(join(makeTempDir(), "parley.db"));
  migrate(db);
  const embed = topicalEmbeddings({ seed: 11, dimension: 384, topics: 4 });
  const insert = db.query(
    "INSERT INTO chunk_vectors (chunk_rowid, project_id, mode, end_user_id, recording_id, recorded_at, embedding, embedding_bits) VALUES (?1, 'prj_1', 'test', 'eu_1', ?2, '', ?3, vec_quantize_binary(?3))",
  );
  db.transaction(() => {
    for (let i = 1; i <= CHUNKS; i++) insert.run(i, `rec_${i % 50}`, embed());
  })();
  return { db, embed };
}

test("a quantized scan learns the bit distance its candidates lie within, and finds what an unbounded scan finds from it", () => {
  const { db, embed } = library();
  const owner = ownerToken(filter, filter.endUserId);
  const learning = { db, searchCounts: new DocumentCounts(db) };
  expect(learning.searchCounts.scanBound(owner)).toBeUndefined();
  const first = embed();
  vectorCandidates(learning, filter, first, 16, "quantized");
  const bound = learning.searchCounts.scanBound(owner)!;
  // Past the farthest of the rescored candidates' 384 bits, and short of a random pair's ~180.
  expect(bound).toBeGreaterThan(0);
  expect(bound).toBeLessThan(384 / 2);
  for (const q of Array.from({ length: 10 }, embed)) {
    const unbounded = vectorCandidates({ db, searchCounts: new DocumentCounts(db) }, filter, q, 16, "quantized");
    expect(unbounded).toHaveLength(16);
    expect(vectorCandidates(learning, filter, q, 16, "quantized")).toEqual(unbounded);
  }
});

test(`a bound too tight to hold ${rescoredCandidates(16)} candidates costs a second scan, never results`, () => {
  const { db, embed } = library();
  const owner = ownerToken(filter, filter.endUserId);
  const store = { db, searchCounts: new DocumentCounts(db) };
  for (const q of Array.from({ length: 5 }, embed)) {
    store.searchCounts.learnScanBound(owner, 0);
    const unbounded = vectorCandidates({ db, searchCounts: new DocumentCounts(db) }, filter, q, 16, "quantized");
    expect(vectorCandidates(store, filter, q, 16, "quantized")).toEqual(unbounded);
    expect(store.searchCounts.scanBound(owner)).toBeGreaterThan(0);
  }
  // A filter leaving fewer chunks than the candidates wanted (one recording's 40): all are rescored, so the answer is exact.
  const oneRecording = { ...filter, recordingIds: ["rec_1"] };
  const q = embed();
  expect(vectorCandidates(store, oneRecording, q, 16, "quantized")).toEqual(vectorCandidates(store, oneRecording, q, 16, "exact"));
  expect(vectorCandidates(store, { ...filter, recordingIds: ["rec_none"] }, q, 16, "quantized")).toEqual([]);
});
