import { beforeAll, describe, expect, test } from "bun:test";
import { maintainCellIndexes } from "../../src/modules/search/indexer";
import { pendingChunks, readIndexState } from "../../src/modules/search/store";
import { cellCount, nearestCells } from "../../src/modules/search/cell-quantizer";
import { heldCellCodes } from "../../src/modules/search/cell-codes";
import { buildCellIndex, cellCandidates, probedCells, readyCellLibrary, warmCellCodes } from "../../src/modules/search/vector-cells";
import { rebuildVectorTable, rescoredCandidates, storeVectors, vectorCandidates } from "../../src/modules/search/vector-index";
import { makeTenant, makeTestApp } from "../helpers";
import { type Line, seedTranscript } from "./search-corpus";
import { recall, topicalEmbeddings } from "./search-embeddings";

/**
 * The cell index of a large library (decisions 192, 204) on a library small enough for CI:
 * the server builds one past 200,000 chunks, of ~1,000 chunks a cell; here 12,000 chunks in
 * cells of ~100 (121 cells, probed to 4 mean cells' worth: a thirtieth of the library
 * scanned), built by the same function. bench/search.ts --tier 1m-one measures it at a million.
 */
const CHUNKS = 12_000;
const K = 8;
const MIN_RECALL = 0.95;
const noPause = async () => {};

let t: Awaited<ReturnType<typeof makeTestApp>>;
let scope: { projectId: string; mode: "test" };
let alice: string;
let bob: string;
let tenantKey: string;
const vectorOf = new Map<number, Float32Array>();
const embed = topicalEmbeddings({ seed: 5, dimension: 384, topics: 10 });

const lines = (n: number, label: string) => Array.from({ length: n }, (_, i): Line => [i * 30, i * 30 + 30, "SPEAKER_1", `${label} ${i}.`]);

/** Gives every chunk waiting for a vector a synthetic one (no embedding model in CI), remembering it. */
function embedPending(make: (rowid: number) => Float32Array = () => embed()) {
  const { generation } = readIndexState(t.deps.db);
  const chunks = pendingChunks(t.deps.db, generation, 100_000);
  const vectors = chunks.map((c) => make(c.rowid));
  chunks.forEach((c, i) => vectorOf.set(c.rowid, vectors[i]!));
  expect(storeVectors(t.deps.db, chunks, vectors, generation)).toBe(true);
  return chunks.map((c) => c.rowid);
}

const rowidsOf = (recordingId: string) =>
  t.deps.db
    .query<{ rowid: number }, [string]>("SELECT rowid FROM chunks WHERE recording_id = ?")
    .all(recordingId)
    .map((r) => r.rowid);
const cellRows = (rowids: number[]) =>
  t.deps.db
    .query<{ n: number }, [string]>("SELECT COUNT(*) AS n FROM chunk_cells WHERE chunk_rowid IN (SELECT value FROM json_each(?))")
    .get(JSON.stringify(rowids))!.n;

let erasable: string;

beforeAll(async () => {
  t = await makeTestApp({ env: { PARLEY_EMBEDDING_MODEL: "all-minilm-l6-v2" } });
  const tenant = makeTenant(t.deps);
  tenantKey = tenant.test;
  scope = { projectId: tenant.project.id, mode: "test" };
  alice = (await t.call("POST", "/v1/end-users", { key: tenant.test, body: {} })).body.id as string;
  bob = (await t.call("POST", "/v1/end-users", { key: tenant.test, body: {} })).body.id as string;
  seedTranscript(t.deps, scope, { endUserId: alice, recordedAt: null, lines: lines(CHUNKS, "Chunk") });
  erasable = seedTranscript(t.deps, scope, { endUserId: alice, recordedAt: null, lines: lines(40, "Erasable") }).recordingId;
  seedTranscript(t.deps, scope, { endUserId: bob, recordedAt: null, lines: lines(400, "Bob") });
  await t.deps.queue.drain();
  embedPending();
  for (const endUserId of [alice, bob]) {
    const built = await buildCellIndex(t.deps.db, { ...scope, endUserId }, t.deps.clock.now(), {
      chunksPerCell: endUserId === alice ? 100 : 50,
      pause: noPause,
    });
    expect(built).not.toBeNull();
  }
}, 240_000);

describe("a library's cell index", () => {
  test(`finds the exact top ${K} with recall >= ${MIN_RECALL}, each query answered from its cells`, () => {
    const filter = { ...scope, endUserId: alice };
    const library = readyCellLibrary(t.deps.db, filter)!;
    expect(cellCount(library.quantizer)).toBe(121);
    const queries = Array.from({ length: 40 }, () => embed());
    const scores = queries.map((q) => {
      // The cells alone hold enough candidates: the search did not fall back to the whole-library scan.
      expect(cellCandidates(t.deps.db, library, filter, q, rescoredCandidates(K))).toHaveLength(rescoredCandidates(K));
      const exact = vectorCandidates(t.deps, filter, q, K, "exact");
      expect(exact).toHaveLength(K);
      return recall(vectorCandidates(t.deps, filter, q, K, "cells"), exact);
    });
    expect(scores.reduce((a, b) => a + b, 0) / scores.length).toBeGreaterThanOrEqual(MIN_RECALL);
    // The neighbours come from the probed cells and nowhere else (shown with 1 probed, where a whole-library scan would differ).
    const inCells = t.deps.db.query<{ chunk_rowid: number }, [number, string]>(
      "SELECT chunk_rowid FROM chunk_cells WHERE library_id = ? AND cell IN (SELECT value FROM json_each(?))",
    );
    let outside = 0;
    let wholeLibraryOutside = 0;
    for (const q of queries) {
      const probed = new Set(inCells.all(library.id, JSON.stringify(probedCells(library, q, 1))).map((r) => r.chunk_rowid));
      expect(probed.size).toBeGreaterThanOrEqual(K);
      outside += vectorCandidates(t.deps, filter, q, K, "cells", { probes: 1 }).filter((r) => !probed.has(r)).length;
      wholeLibraryOutside += vectorCandidates(t.deps, filter, q, K, "quantized").filter((r) => !probed.has(r)).length;
    }
    expect(outside).toBe(0);
    expect(wholeLibraryOutside).toBeGreaterThan(0);
  });

  test("probes the nearest cells until they hold the budget of chunks, however many cells that takes", () => {
    const library = readyCellLibrary(t.deps.db, { ...scope, endUserId: alice })!;
    const held = new Map(
      t.deps.db
        .query<{ cell: number; n: number }, [number]>("SELECT cell, COUNT(*) AS n FROM chunk_cells WHERE library_id = ? GROUP BY cell")
        .all(library.id)
        .map((r) => [r.cell, r.n]),
    );
    const budget = (4 * [...held.values()].reduce((a, b) => a + b, 0)) / cellCount(library.quantizer);
    const probeCounts = new Set<number>();
    for (let i = 0; i < 40; i++) {
      const q = embed();
      const cells = probedCells(library, q, 4);
      expect(cells).toEqual(nearestCells(library.quantizer, q, cells.length));
      const chunks = cells.map((c) => held.get(c) ?? 0);
      const total = chunks.reduce((a, b) => a + b, 0);
      expect(total).toBeGreaterThanOrEqual(budget);
      expect(total - chunks.at(-1)!).toBeLessThan(budget); // the last cell was the one that reached it
      probeCounts.add(cells.length);
    }
    expect(probeCounts.size).toBeGreaterThan(1); // not one count of cells for every query
  });

  test("never returns another end user's chunk, even one identical to the query", () => {
    const bobs = t.deps.db
      .query<{ rowid: number }, [string]>("SELECT rowid FROM chunks WHERE end_user_id = ?")
      .all(bob)
      .map((r) => r.rowid);
    const aliceFilter = { ...scope, endUserId: alice };
    const bobFilter = { ...scope, endUserId: bob };
    expect(readyCellLibrary(t.deps.db, bobFilter)!.id).not.toBe(readyCellLibrary(t.deps.db, aliceFilter)!.id);
    for (const rowid of bobs.slice(0, 20)) {
      const q = vectorOf.get(rowid)!;
      const found = vectorCandidates(t.deps, aliceFilter, q, 16, "cells");
      expect(found).toHaveLength(16);
      expect(found.filter((r) => bobs.includes(r))).toEqual([]);
      // Bob's own search finds it first.
      expect(vectorCandidates(t.deps, bobFilter, q, 1, "cells")).toEqual([rowid]);
    }
  });

  test("ranks from the codes held in memory exactly as from its rows in SQL", async () => {
    const filter = { ...scope, endUserId: alice };
    const library = readyCellLibrary(t.deps.db, filter)!;
    expect(await warmCellCodes(t.deps.db, filter, noPause)).toBe(true);
    const rows = t.deps.db.query<{ n: number }, [number]>("SELECT COUNT(*) AS n FROM chunk_cells WHERE library_id = ?").get(library.id)!.n;
    expect(heldCellCodes(t.deps.db).get(library.id)).toBe(rows);
    // A date filter every chunk passes: the held codes carry no dates, so that search ranks the rows in SQL.
    const viaSql = { ...filter, recordedAfter: "1970-01-01T00:00:00.000Z" };
    // The seeded chunks have no date (""), which that filter leaves out: dated here, where the codes are not concerned.
    t.deps.db.exec("UPDATE chunk_cells SET recorded_at = '2026-01-01T00:00:00.000Z'");
    for (let i = 0; i < 40; i++) {
      const q = embed();
      const held = cellCandidates(t.deps.db, library, filter, q, 16);
      expect(held).toHaveLength(16);
      const sql = cellCandidates(t.deps.db, library, viaSql, q, 16)!;
      expect(held!.map((r) => r.chunk_rowid)).toEqual(sql.map((r) => r.chunk_rowid));
      held!.forEach((r, j) => expect(r.distance).toBeCloseTo(sql[j]!.distance, 4));
    }
    // Still held: a copy that missed a change would have been dropped, and these searches read through SQL.
    expect(heldCellCodes(t.deps.db).has(library.id)).toBe(true);
  });

  test("a rebuilt index's codes replace the old one's in memory", async () => {
    const filter = { ...scope, endUserId: bob };
    expect(await warmCellCodes(t.deps.db, filter, noPause)).toBe(true);
    const old = readyCellLibrary(t.deps.db, filter)!.id;
    expect(heldCellCodes(t.deps.db).get(old)).toBe(400);
    const rebuilt = await buildCellIndex(t.deps.db, filter, t.deps.clock.now(), { chunksPerCell: 50, pause: noPause });
    expect(rebuilt!.libraryId).not.toBe(old);
    expect(heldCellCodes(t.deps.db).has(old)).toBe(false); // dropped with its index
    expect(await warmCellCodes(t.deps.db, filter, noPause)).toBe(true);
    expect(heldCellCodes(t.deps.db).get(rebuilt!.libraryId)).toBe(400);
  });

  test("files chunks embedded after it was built, once each, and again under a new vector", () => {
    const filter = { ...scope, endUserId: alice };
    const library = readyCellLibrary(t.deps.db, filter)!;
    expect(heldCellCodes(t.deps.db).has(library.id)).toBe(true);
    const { recordingId } = seedTranscript(t.deps, scope, { endUserId: alice, recordedAt: null, lines: lines(10, "Later") });
    return t.deps.queue.drain().then(() => {
      const later = embedPending();
      expect(later).toHaveLength(10);
      expect(cellRows(later)).toBe(10);
      for (const rowid of later) expect(vectorCandidates(t.deps, filter, vectorOf.get(rowid)!, 1, "cells")).toEqual([rowid]);
      // The codes held in memory missed them: that copy was dropped at the first search after, never read.
      expect(heldCellCodes(t.deps.db).has(library.id)).toBe(false);
      // Re-embedded (a new model's vector of the same dimension): filed under its new vector only.
      const { generation } = readIndexState(t.deps.db);
      const chunks = pendingChunks(t.deps.db, generation + 1, 100, recordingId);
      const fresh = chunks.map(() => embed());
      expect(storeVectors(t.deps.db, chunks, fresh, generation)).toBe(true);
      expect(cellRows(later)).toBe(10);
      chunks.forEach((c, i) => expect(vectorCandidates(t.deps, filter, fresh[i]!, 1, "cells")).toEqual([c.rowid]));
    });
  });

  test("loses an erased recording's chunks with the recording", async () => {
    const filter = { ...scope, endUserId: alice };
    const erased = rowidsOf(erasable);
    expect(erased).toHaveLength(40);
    expect(cellRows(erased)).toBe(40);
    const q = vectorOf.get(erased[0]!)!;
    const library = readyCellLibrary(t.deps.db, filter)!;
    expect(await warmCellCodes(t.deps.db, filter, noPause)).toBe(true);
    expect(vectorCandidates(t.deps, filter, q, 1, "cells")).toEqual([erased[0]!]);
    expect(heldCellCodes(t.deps.db).has(library.id)).toBe(true);
    expect((await t.call("DELETE", `/v1/recordings/${erasable}`, { key: tenantKey })).status).toBe(204);
    expect(cellRows(erased)).toBe(0);
    // Their int8 codes left memory with the erasure, before any search.
    expect(heldCellCodes(t.deps.db).has(library.id)).toBe(false);
    expect(vectorCandidates(t.deps, filter, q, 16, "cells").filter((r) => erased.includes(r))).toEqual([]);
  });
});

describe("the periodic check", () => {
  test("queues a build for a library past the threshold, and drops the index of one that fell below half of it", async () => {
    // Bob's index was built by hand; Alice's is dropped here so the check has one to build.
    const db = t.deps.db;
    db.query("DELETE FROM vector_libraries WHERE end_user_id = ?").run(alice);
    await maintainCellIndexes(t.deps, 1_000);
    expect(readyCellLibrary(db, { ...scope, endUserId: bob })).toBeNull(); // 400 chunks < 1,000 / 2
    await t.deps.queue.drain();
    const built = readyCellLibrary(db, { ...scope, endUserId: alice })!;
    expect(cellCount(built.quantizer)).toBe(16); // ~12,000 chunks / 1,000 a cell
    const filed = db.query<{ n: number }, [number]>("SELECT COUNT(*) AS n FROM chunk_cells WHERE library_id = ?").get(built.id)!.n;
    expect(filed).toBe(db.query<{ n: number }, [string]>("SELECT COUNT(*) AS n FROM chunks WHERE end_user_id = ?").get(alice)!.n);
    // Current and large enough: nothing more to do.
    await maintainCellIndexes(t.deps, 1_000);
    expect(t.deps.db.query<{ n: number }, []>("SELECT COUNT(*) AS n FROM jobs WHERE type = 'search.build_cells' AND state = 'queued'").get()!.n).toBe(0);
    expect(readyCellLibrary(db, { ...scope, endUserId: alice })!.id).toBe(built.id);
  }, 120_000);

  test("a new embedding model drops every cell index with the vectors", () => {
    t.deps.db.transaction(() => rebuildVectorTable(t.deps.db, "another-model", 384, t.deps.clock.now()))();
    expect(t.deps.db.query<{ n: number }, []>("SELECT (SELECT COUNT(*) FROM vector_libraries) + (SELECT COUNT(*) FROM chunk_cells) AS n").get()!.n).toBe(0);
  });
});
