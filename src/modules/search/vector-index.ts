import type { Database, SQLQueryBindings } from "bun:sqlite";
import { type ChunkFilter, chunkFilterSql, libraryChunkCount, ownerToken, partitionOf, type PendingChunk, readIndexState, type SearchStore } from "./store";
import { assignToCells, cellCandidates, dropAllCellIndexes, PROBED_CELLS, readyCellLibrary } from "./vector-cells";

/**
 * Vectors are stored and queried at unit length: L2 distance then orders exactly as cosine,
 * and sqlite-vec's L2 scan is faster than its cosine one. Distance sqrt(2) is cosine 0.
 */
export function unit(v: Float32Array): Float32Array {
  const norm = Math.hypot(...v);
  return norm > 0 && Math.abs(norm - 1) > 1e-6 ? v.map((x) => x / norm) : v;
}

/** L2 distance of orthogonal unit vectors, less a margin for float rounding (cosine ~0.001). */
const NO_SIMILARITY = Math.SQRT2 - 1e-3;

/**
 * How an end user's nearest chunks are found: `exact` scans every float vector; `quantized`
 * scans one bit per dimension (the sign, `vec_quantize_binary`) for the candidates
 * (`rescoredCandidates`) nearest by hamming distance and rescores those with the exact
 * floats (decisions 066, 099); `cells` ranks the int8 vectors of the few cells of the
 * library's cell index nearest the query (decision 192), and falls back to `quantized`
 * when those cells hold too few chunks for the filters.
 */
export type VectorScan = "exact" | "quantized" | "cells";

/**
 * Libraries up to this many chunks are scanned exactly: sqlite-vec has no SIMD float path in
 * the build we ship, and its exact scan costs about 0.75 ms per 1,000 vectors on 2 cores, so
 * past this the scan alone would outgrow the 30 ms target (decision 064).
 */
export const EXACT_SCAN_MAX_CHUNKS = 20_000;

/**
 * Bit-scan candidates rescored with the floats: at least MIN_RESCORED, else OVERSAMPLE per
 * neighbour wanted. Chosen by measurement (bench/search.ts, search-recall.test.ts): at 100k
 * chunks the true top 8 are found among the nearest 64 by hamming distance about 94% of
 * the time, among the nearest 96 about 98%; rescoring 96 costs ~2 ms.
 */
export const MIN_RESCORED = 96;
export const OVERSAMPLE = 4;
export const rescoredCandidates = (k: number) => Math.max(MIN_RESCORED, k * OVERSAMPLE);

/**
 * Bits past a library's last candidate distance that its next bit scan looks: about 0.6
 * standard deviations of a random pair's hamming distance (sqrt(dimension) / 2). Looking
 * further costs little; a bound too tight costs one more scan (decision 099).
 */
const boundMargin = (dimension: number) => Math.ceil(0.6 * Math.sqrt(dimension));

/** The scan for the filter's library: exact while small, the cell index once it has a ready one (past CELL_INDEX_MIN_CHUNKS), else the whole bit scan. */
export function vectorScanFor(store: SearchStore, filter: ChunkFilter): VectorScan {
  if (libraryChunkCount(store, filter) <= EXACT_SCAN_MAX_CHUNKS) return "exact";
  return readyCellLibrary(store.db, filter) ? "cells" : "quantized";
}

/** Dimensions a vector table can hold: sqlite-vec's bit vectors need a multiple of 8. */
function checkDimension(dimension: number): void {
  if (!Number.isInteger(dimension) || dimension < 8 || dimension > 8192 || dimension % 8 !== 0) {
    throw new Error(`embedder dimension ${dimension} is not usable (a multiple of 8 up to 8192 is)`);
  }
}

/**
 * Drops every vector and recreates the vector table for a new model; the generation bump
 * marks every chunk as waiting for a vector. Runs in the caller's transaction.
 */
export function rebuildVectorTable(db: Database, model: string, dimension: number, now: Date): void {
  checkDimension(dimension);
  dropAllCellIndexes(db);
  db.exec("DROP TABLE chunk_vectors");
  db.exec(`CREATE VIRTUAL TABLE chunk_vectors USING vec0(
    chunk_rowid INTEGER PRIMARY KEY, project_id TEXT PARTITION KEY, mode TEXT PARTITION KEY, end_user_id TEXT PARTITION KEY,
    recording_id TEXT, recorded_at TEXT, embedding FLOAT[${dimension}], embedding_bits BIT[${dimension}])`);
  db.query("UPDATE search_index SET model = ?, dimension = ?, generation = generation + 1, updated_at = ? WHERE id = 1").run(
    model,
    dimension,
    now.toISOString(),
  );
}

/** Stores vectors made under `generation`; a no-op if a re-index started meanwhile (their dimension may be stale). */
export function storeVectors(db: Database, chunks: PendingChunk[], vectors: Float32Array[], generation: number): boolean {
  return db.transaction(() => {
    if (readIndexState(db).generation !== generation) return false;
    const upsertDelete = db.query("DELETE FROM chunk_vectors WHERE chunk_rowid = ?");
    const insert = db.query(
      `INSERT INTO chunk_vectors (chunk_rowid, project_id, mode, end_user_id, recording_id, recorded_at, embedding, embedding_bits)
       VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, vec_quantize_binary(?7))`,
    );
    const uncell = db.query("DELETE FROM chunk_cells WHERE chunk_rowid = ?");
    const mark = db.query("UPDATE chunks SET embedded_generation = ? WHERE rowid = ?");
    const stored: { chunk: PendingChunk; vector: Float32Array }[] = [];
    chunks.forEach((c, i) => {
      // The chunk may have been replaced or deleted while it was being embedded.
      if (!db.query("SELECT 1 FROM chunks WHERE rowid = ?").get(c.rowid)) return;
      const vector = unit(vectors[i]!);
      upsertDelete.run(c.rowid);
      uncell.run(c.rowid);
      insert.run(c.rowid, c.project_id, c.mode, partitionOf(c.end_user_id), c.recording_id, c.recorded_at ?? "", vector);
      mark.run(generation, c.rowid);
      stored.push({ chunk: c, vector });
    });
    assignToCells(
      db,
      stored.map((s) => s.chunk),
      stored.map((s) => s.vector),
    );
    return true;
  })();
}

type Neighbour = { chunk_rowid: number; distance: number };

/**
 * One KNN over the end user's partition, on the float column or on the bit column (hamming
 * distance), optionally only within `bound`: sqlite-vec's KNN picks each block's top k by
 * passes over the block, so its cost grows with k, unless a distance bound leaves few
 * vectors of each block to pick from.
 */
function knn(db: Database, filter: ChunkFilter, column: "embedding" | "embedding_bits", query: Float32Array, k: number, bound?: number): Neighbour[] {
  const extra = chunkFilterSql(filter);
  const match = column === "embedding" ? "embedding MATCH ?" : "embedding_bits MATCH vec_quantize_binary(?)";
  const within = bound === undefined ? { sql: "", params: [] } : { sql: " AND distance <= ?", params: [bound] };
  return db
    .query<Neighbour, SQLQueryBindings[]>(
      `SELECT chunk_rowid, distance FROM chunk_vectors
       WHERE ${match} AND k = ?${within.sql} AND project_id = ? AND mode = ? AND end_user_id = ?${extra.sql}
       ORDER BY distance`,
    )
    .all(query, k, ...within.params, filter.projectId, filter.mode, filter.endUserId, ...extra.params);
}

/**
 * The `count` chunks nearest by hamming distance. The scan first looks only within the
 * bound the library's last scan learned; when that holds `count` chunks they are exactly the
 * nearest `count`, found at a fraction of the cost. Otherwise (no bound yet, a query in a
 * sparser region, filters leaving few chunks) it scans again without a bound.
 */
function bitCandidates({ db, searchCounts }: SearchStore, filter: ChunkFilter, query: Float32Array, count: number): Neighbour[] {
  const owner = ownerToken(filter, filter.endUserId);
  const bound = searchCounts.scanBound(owner);
  let found = bound === undefined ? [] : knn(db, filter, "embedding_bits", query, count, bound);
  if (found.length < count) found = knn(db, filter, "embedding_bits", query, count);
  if (found.length === count) searchCounts.learnScanBound(owner, found[count - 1]!.distance + boundMargin(query.length));
  return found;
}

/**
 * The exact float distance of each candidate, nearest first: one statement joining the
 * rowids to vec0's point lookups (~20% less than a statement per candidate; vec0 answers
 * `chunk_rowid IN (...)` beside MATCH by scanning everything, so not that).
 */
function rescore(db: Database, candidates: Neighbour[], query: Float32Array, k: number): Neighbour[] {
  return db
    .query<Neighbour, [Float32Array, string]>(
      `SELECT v.chunk_rowid AS chunk_rowid, vec_distance_l2(v.embedding, ?1) AS distance
       FROM json_each(?2) AS j JOIN chunk_vectors AS v ON v.chunk_rowid = j.value`,
    )
    .all(query, JSON.stringify(candidates.map((c) => c.chunk_rowid)))
    .sort((a, b) => a.distance - b.distance || a.chunk_rowid - b.chunk_rowid)
    .slice(0, k);
}

/**
 * The nearest `k` by the library's cell index, ranked by its int8 copies; when it has none
 * ready or its nearest cells hold too few for the filters, by the whole-library bit scan
 * rescored with the floats.
 */
function cellNeighbours(store: SearchStore, filter: ChunkFilter, query: Float32Array, k: number, candidates: number, probes: number): Neighbour[] {
  const library = readyCellLibrary(store.db, filter);
  const ranked = library && cellCandidates(store.db, library, filter, query, k, probes);
  return ranked ?? rescore(store.db, bitCandidates(store, filter, query, candidates), query, k);
}

/**
 * Nearest chunks, best first; the partition keys (and a cell index's own rows) confine the
 * scan to one end user. Chunks with no positive cosine similarity (L2 distance sqrt(2) or
 * more between unit vectors) are not neighbours in any useful sense and are left out.
 * `budget` (candidates rescored; cells probed) is there for bench/search.ts to weigh others.
 */
export function vectorCandidates(
  store: SearchStore,
  filter: ChunkFilter,
  vector: Float32Array,
  k: number,
  scan: VectorScan,
  budget: { candidates?: number; probes?: number } = {},
): number[] {
  const query = unit(vector);
  const candidates = budget.candidates ?? rescoredCandidates(k);
  const nearest =
    scan === "exact"
      ? knn(store.db, filter, "embedding", query, k)
      : scan === "cells"
        ? cellNeighbours(store, filter, query, k, candidates, budget.probes ?? PROBED_CELLS)
        : rescore(store.db, bitCandidates(store, filter, query, candidates), query, k);
  return nearest.filter((r) => r.distance < NO_SIMILARITY).map((r) => r.chunk_rowid);
}
