import type { Database, SQLQueryBindings } from "bun:sqlite";
import { sha256Hex } from "../../crypto";
import type { Tenant } from "../../http/credentials";
import { newId } from "../../ids";
import type { Chunk } from "./chunking";
import { quoted, rankLibrary } from "./library-bm25";

/** A chunk row as search results need it (spec 2.10 minus score). */
export type ChunkRecord = {
  rowid: number;
  chunk_id: string;
  recording_id: string;
  transcription_id: string;
  chunk_text: string;
  speaker: string | null;
  start_ms: number;
  end_ms: number;
  recorded_at: string | null;
};

export type ChunkOwner = { recordingId: string; transcriptionId: string; endUserId: string | null; recordedAt: string | null };

/** Where a search may look: one end user of one tenant, optionally narrowed. */
export type ChunkFilter = Tenant & { endUserId: string; recordingIds?: string[]; recordedAfter?: string; recordedBefore?: string };

export type IndexState = { model: string | null; dimension: number; generation: number };

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

/** vec0 partition keys cannot be NULL; recordings without an end user are kept under "". */
const partitionOf = (endUserId: string | null) => endUserId ?? "";

/** The single FTS5 token naming (project, mode, end user); hex, so no tokenizer splits it. */
export function ownerToken(tenant: Tenant, endUserId: string | null): string {
  return `o${sha256Hex(`${tenant.projectId}|${tenant.mode}|${partitionOf(endUserId)}`).slice(0, 24)}`;
}

/** Replaces a recording's chunks (re-transcription); the triggers clear the old ones from both indexes. */
export function replaceRecordingChunks(db: Database, tenant: Tenant, owner: ChunkOwner, chunks: Chunk[], now: Date): void {
  db.query("DELETE FROM chunks WHERE recording_id = ? AND project_id = ? AND mode = ?").run(owner.recordingId, tenant.projectId, tenant.mode);
  const insert = db.query(
    `INSERT INTO chunks (id, project_id, mode, end_user_id, recording_id, transcription_id, seq, start_ms, end_ms, speaker, recorded_at, text, owner_token, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const token = ownerToken(tenant, owner.endUserId);
  forgetDocumentCounts(db, token);
  for (const c of chunks) {
    insert.run(
      newId("chk_", now.getTime()),
      tenant.projectId,
      tenant.mode,
      owner.endUserId,
      owner.recordingId,
      owner.transcriptionId,
      c.seq,
      c.startMs,
      c.endMs,
      c.speaker,
      owner.recordedAt,
      c.text,
      token,
      now.toISOString(),
    );
  }
}

export function readIndexState(db: Database): IndexState {
  return db.query<IndexState, []>("SELECT model, dimension, generation FROM search_index WHERE id = 1").get()!;
}

/** Records the model of a vector index that holds no vectors of another model yet. */
export function adoptIndexModel(db: Database, model: string, now: Date): void {
  db.query("UPDATE search_index SET model = ?, updated_at = ? WHERE id = 1").run(model, now.toISOString());
}

/**
 * Drops every vector and recreates the vector table for a new model; the generation bump
 * marks every chunk as waiting for a vector. Runs in the caller's transaction.
 */
export function rebuildVectorTable(db: Database, model: string, dimension: number, now: Date): void {
  if (!Number.isInteger(dimension) || dimension < 1 || dimension > 8192) throw new Error(`embedder dimension ${dimension} is not usable`);
  db.exec("DROP TABLE chunk_vectors");
  db.exec(`CREATE VIRTUAL TABLE chunk_vectors USING vec0(
    chunk_rowid INTEGER PRIMARY KEY, project_id TEXT PARTITION KEY, mode TEXT PARTITION KEY, end_user_id TEXT PARTITION KEY,
    recording_id TEXT, recorded_at TEXT, embedding FLOAT[${dimension}])`);
  db.query("UPDATE search_index SET model = ?, dimension = ?, generation = generation + 1, updated_at = ? WHERE id = 1").run(model, dimension, now.toISOString());
}

export type PendingChunk = { rowid: number; project_id: string; mode: string; end_user_id: string | null; recording_id: string; recorded_at: string | null; text: string };

/** Chunks without a vector of the current generation, optionally of one recording. */
export function pendingChunks(db: Database, generation: number, limit: number, recordingId?: string): PendingChunk[] {
  const byRecording = recordingId ? "AND recording_id = ?" : "";
  const params: SQLQueryBindings[] = recordingId ? [generation, recordingId, limit] : [generation, limit];
  return db
    .query<PendingChunk, SQLQueryBindings[]>(
      `SELECT rowid, project_id, mode, end_user_id, recording_id, recorded_at, text FROM chunks
       WHERE embedded_generation < ? ${byRecording} ORDER BY rowid LIMIT ?`,
    )
    .all(...params);
}

/** Stores vectors made under `generation`; a no-op if a re-index started meanwhile (their dimension may be stale). */
export function storeVectors(db: Database, chunks: PendingChunk[], vectors: Float32Array[], generation: number): boolean {
  return db.transaction(() => {
    if (readIndexState(db).generation !== generation) return false;
    const upsertDelete = db.query("DELETE FROM chunk_vectors WHERE chunk_rowid = ?");
    const insert = db.query("INSERT INTO chunk_vectors (chunk_rowid, project_id, mode, end_user_id, recording_id, recorded_at, embedding) VALUES (?, ?, ?, ?, ?, ?, ?)");
    const mark = db.query("UPDATE chunks SET embedded_generation = ? WHERE rowid = ?");
    chunks.forEach((c, i) => {
      // The chunk may have been replaced or deleted while it was being embedded.
      if (!db.query("SELECT 1 FROM chunks WHERE rowid = ?").get(c.rowid)) return;
      upsertDelete.run(c.rowid);
      insert.run(c.rowid, c.project_id, c.mode, partitionOf(c.end_user_id), c.recording_id, c.recorded_at ?? "", unit(vectors[i]!));
      mark.run(generation, c.rowid);
    });
    return true;
  })();
}

export function countPendingChunks(db: Database, generation: number): number {
  return db.query<{ n: number }, [number]>("SELECT COUNT(*) AS n FROM chunks WHERE embedded_generation < ?").get(generation)!.n;
}

function chunkFilterSql(filter: ChunkFilter, alias: string): { sql: string; params: SQLQueryBindings[] } {
  const parts: string[] = [];
  const params: SQLQueryBindings[] = [];
  if (filter.recordingIds) {
    parts.push(`${alias}recording_id IN (${filter.recordingIds.map(() => "?").join(", ") || "NULL"})`);
    params.push(...filter.recordingIds);
  }
  if (filter.recordedAfter) {
    parts.push(`${alias}recorded_at >= ?`);
    params.push(filter.recordedAfter);
  }
  if (filter.recordedBefore) {
    // vec0 cannot hold NULL, so an unknown recorded_at is stored there as "", which sorts
    // before every date: exclude it, as NULL is excluded on the keyword side.
    parts.push(`${alias}recorded_at > ''`, `${alias}recorded_at < ?`);
    params.push(filter.recordedBefore);
  }
  return { sql: parts.map((p) => ` AND ${p}`).join(""), params };
}

/**
 * Nearest chunks, best first; the partition keys confine the scan to one end user. Chunks
 * with no positive cosine similarity (L2 distance sqrt(2) or more between unit vectors)
 * are not neighbours in any useful sense and are left out.
 */
export function vectorCandidates(db: Database, filter: ChunkFilter, vector: Float32Array, k: number): number[] {
  const extra = chunkFilterSql(filter, "");
  return db
    .query<{ chunk_rowid: number; distance: number }, SQLQueryBindings[]>(
      `SELECT chunk_rowid, distance FROM chunk_vectors
       WHERE embedding MATCH ? AND k = ? AND project_id = ? AND mode = ? AND end_user_id = ?${extra.sql}
       ORDER BY distance`,
    )
    .all(unit(vector), k, filter.projectId, filter.mode, filter.endUserId, ...extra.params)
    .filter((r) => r.distance < NO_SIMILARITY)
    .map((r) => r.chunk_rowid);
}


/** Positive document counts per owner token and word, per connection. */
type DocCounts = { at: number; size: number; byOwner: Map<string, Map<string, number>> };
const docCountCache = new WeakMap<Database, DocCounts>();
/** Counts only order and budget the words, so some staleness is fine; counting a common word is not cheap. */
const DOC_COUNT_TTL_MS = 10 * 60_000;
const DOC_COUNT_MAX_TERMS = 50_000;

/** Called when an owner's chunks change, so its next search counts afresh. */
function forgetDocumentCounts(db: Database, owner: string): void {
  const cache = docCountCache.get(db);
  const counts = cache?.byOwner.get(owner);
  if (!cache || !counts) return;
  cache.size -= counts.size;
  cache.byOwner.delete(owner);
}

/**
 * How many of one end user's chunks match `match` (a word within the owner token, or the
 * owner token alone under the key ""), counted through FTS5 itself so a word is stemmed as
 * the index stems it, and within the owner token so other tenants' data never changes which
 * words a search keeps. Counting walks postings, so positive counts are cached; a zero is
 * not (counting an absent word is cheap, and a cached zero would hide a word indexed a
 * moment later).
 */
function cachedCount(db: Database, owner: string, key: string, match: string): number {
  let cache = docCountCache.get(db);
  if (!cache || Date.now() - cache.at > DOC_COUNT_TTL_MS || cache.size > DOC_COUNT_MAX_TERMS) {
    docCountCache.set(db, (cache = { at: Date.now(), size: 0, byOwner: new Map() }));
  }
  let counts = cache.byOwner.get(owner);
  if (!counts) cache.byOwner.set(owner, (counts = new Map()));
  const cached = counts.get(key);
  if (cached !== undefined) return cached;
  const count = db.query<{ n: number }, [string]>("SELECT COUNT(*) AS n FROM chunks_fts WHERE chunks_fts MATCH ?").get(match)!.n;
  if (count > 0) {
    counts.set(key, count);
    cache.size++;
  }
  return count;
}

const documentCount = (db: Database, owner: string, word: string) => cachedCount(db, owner, word, `owner_token : "${owner}" AND text : ${quoted(word)}`);
const ownerChunkCount = (db: Database, owner: string) => cachedCount(db, owner, "", `owner_token : "${owner}"`);

/** Postings a keyword query may walk: bounds its cost on large libraries (about 10 ms at 100k chunks on 2 cores). */
const POSTINGS_BUDGET = 5_000;

/**
 * The words worth searching, rarest first, counted in the end user's own chunks. Words
 * absent from them are dropped (they match nothing). The rest are kept, rarest first,
 * while their postings fit a budget, and the rarest always stays, so a query with any
 * matching word is never emptied. The budget only bites on large libraries: there the
 * common words left out carry little BM25 weight (FTS5 floors the idf of a word in half
 * the chunks), walking their postings was most of a keyword query's cost, and the vector
 * side still sees the whole query.
 */
function informativeWords(db: Database, owner: string, words: string[]): string[] {
  const counted = words.map((w) => ({ w, docs: documentCount(db, owner, w) })).filter((x) => x.docs > 0);
  counted.sort((a, b) => a.docs - b.docs);
  const kept: string[] = [];
  let postings = 0;
  for (const { w, docs } of counted) {
    if (kept.length > 0 && postings + docs > POSTINGS_BUDGET) break;
    kept.push(w);
    postings += docs;
  }
  return kept;
}

/** The best of a library's scores (rankLibrary) that pass the recording and date filters, best first, newest on a tie. */
function bestWithinFilters(db: Database, filter: ChunkFilter, scores: Map<number, number>, limit: number): number[] {
  let ranked = [...scores].sort((a, b) => b[1] - a[1] || b[0] - a[0]).map(([rowid]) => rowid);
  const extra = chunkFilterSql(filter, "");
  if (extra.sql && ranked.length > 0) {
    const allowed = new Set(
      db
        .query<{ rowid: number }, SQLQueryBindings[]>(
          `SELECT rowid FROM chunks WHERE rowid IN (SELECT value FROM json_each(?)) AND project_id = ? AND mode = ? AND end_user_id = ?${extra.sql}`,
        )
        .all(JSON.stringify(ranked), filter.projectId, filter.mode, filter.endUserId, ...extra.params)
        .map((r) => r.rowid),
    );
    ranked = ranked.filter((rowid) => allowed.has(rowid));
  }
  return ranked.slice(0, limit);
}

/**
 * Best BM25 matches of any query word, best first, within the end user's postings only
 * (the owner token). A library within the postings budget is scored by rankLibrary (BM25
 * over the end user's own chunks, without bm25()'s walk over every tenant's postings); a
 * larger one by FTS5's bm25() over the informative words, where FTS5 answers alone
 * without filters and the chunks table is joined only to apply recording and date filters.
 */
export function keywordCandidates(db: Database, filter: ChunkFilter, words: string[], limit: number): number[] {
  const owner = ownerToken(filter, filter.endUserId);
  const total = ownerChunkCount(db, owner);
  if (total === 0) return [];
  if (total <= POSTINGS_BUDGET) return bestWithinFilters(db, filter, rankLibrary(db, owner, words, POSTINGS_BUDGET), limit);
  const useful = informativeWords(db, owner, words);
  if (useful.length === 0) return [];
  const match = `owner_token : "${owner}" AND text : (${useful.map(quoted).join(" OR ")})`;
  const extra = chunkFilterSql(filter, "c.");
  const sql = extra.sql
    ? `SELECT c.rowid FROM chunks_fts JOIN chunks c ON c.rowid = chunks_fts.rowid
       WHERE chunks_fts MATCH ? AND c.project_id = ? AND c.mode = ? AND c.end_user_id = ?${extra.sql}
       ORDER BY bm25(chunks_fts, 0.0, 1.0) LIMIT ?`
    : "SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY bm25(chunks_fts, 0.0, 1.0) LIMIT ?";
  const params: SQLQueryBindings[] = extra.sql ? [match, filter.projectId, filter.mode, filter.endUserId, ...extra.params, limit] : [match, limit];
  return db
    .query<{ rowid: number }, SQLQueryBindings[]>(sql)
    .all(...params)
    .map((r) => r.rowid);
}

/**
 * The chunks behind candidate rowids, re-checked against the tenant, end user and filters:
 * isolation never rests on a hash alone, and both candidate lists answer to the same filters.
 */
export function chunksByRowid(db: Database, filter: ChunkFilter, rowids: number[]): Map<number, ChunkRecord> {
  if (rowids.length === 0) return new Map();
  const extra = chunkFilterSql(filter, "");
  const rows = db
    .query<ChunkRecord, SQLQueryBindings[]>(
      `SELECT rowid, id AS chunk_id, recording_id, transcription_id, text AS chunk_text, speaker, start_ms, end_ms, recorded_at
       FROM chunks WHERE rowid IN (${rowids.map(() => "?").join(", ")}) AND project_id = ? AND mode = ? AND end_user_id = ?${extra.sql}`,
    )
    .all(...rowids, filter.projectId, filter.mode, filter.endUserId, ...extra.params);
  return new Map(rows.map((r) => [r.rowid, r]));
}
