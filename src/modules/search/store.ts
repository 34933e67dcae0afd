import type { Database, SQLQueryBindings } from "bun:sqlite";
import { sha256Hex } from "../../crypto";
import type { Tenant } from "../../http/credentials";
import { newId } from "../../ids";
import type { Chunk } from "./chunking";

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
    parts.push(`${alias}recorded_at < ?`);
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

/** A word as an FTS5 string: never read as query syntax. */
const quoted = (word: string) => `"${word.replaceAll('"', '""')}"`;

type DocCounts = { at: number; counts: Map<string, number> };
const docCountCache = new WeakMap<Database, DocCounts>();
/** Document counts are a heuristic input, so a few minutes' staleness is fine; counting a common word is not cheap. */
const DOC_COUNT_TTL_MS = 10 * 60_000;
const DOC_COUNT_MAX_TERMS = 50_000;

/**
 * How many chunks contain a word, counted through FTS5 itself so the word is stemmed as
 * the index stems it. Counting walks the word's postings, so results are cached per connection.
 */
function documentCount(db: Database, word: string): number {
  let cache = docCountCache.get(db);
  if (!cache || Date.now() - cache.at > DOC_COUNT_TTL_MS || cache.counts.size > DOC_COUNT_MAX_TERMS) {
    docCountCache.set(db, (cache = { at: Date.now(), counts: new Map() }));
  }
  let count = cache.counts.get(word);
  if (count === undefined) {
    count = db.query<{ n: number }, [string]>("SELECT COUNT(*) AS n FROM chunks_fts WHERE chunks_fts MATCH ?").get(`text : ${quoted(word)}`)!.n;
    cache.counts.set(word, count);
  }
  return count;
}

/** Postings a keyword query may walk: bounds its cost on large libraries (about 10 ms at 100k chunks on 2 cores). */
const POSTINGS_BUDGET = 5_000;

/**
 * The words worth searching, rarest first. Words in more than half of all chunks are
 * dropped: BM25 gives them no weight (FTS5 floors their idf), yet walking their postings
 * was most of a keyword query's cost. Then words are kept, rarest first, while their
 * postings fit a budget (the rarest always stays): the common words left out carry little
 * BM25 weight, and the vector side still sees the whole query. MAX(rowid) stands in for
 * the chunk count: it never undercounts, so it errs towards keeping a word.
 */
function informativeWords(db: Database, words: string[]): string[] {
  const total = db.query<{ n: number | null }, []>("SELECT MAX(rowid) AS n FROM chunks").get()?.n ?? 0;
  const counted = words.map((w) => ({ w, docs: documentCount(db, w) })).filter((x) => x.docs > 0 && x.docs <= total / 2);
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

/**
 * Best BM25 matches of any query word, best first, within the end user's postings only
 * (the owner token). Without filters FTS5 answers alone; the chunks table is joined only
 * to apply recording and date filters.
 */
export function keywordCandidates(db: Database, filter: ChunkFilter, words: string[], limit: number): number[] {
  const useful = informativeWords(db, words);
  if (useful.length === 0) return [];
  const match = `owner_token : "${ownerToken(filter, filter.endUserId)}" AND text : (${useful.map(quoted).join(" OR ")})`;
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

/** The chunks behind candidate rowids, re-checked against the tenant and end user (isolation never rests on a hash alone). */
export function chunksByRowid(db: Database, filter: ChunkFilter, rowids: number[]): Map<number, ChunkRecord> {
  if (rowids.length === 0) return new Map();
  const rows = db
    .query<ChunkRecord, SQLQueryBindings[]>(
      `SELECT rowid, id AS chunk_id, recording_id, transcription_id, text AS chunk_text, speaker, start_ms, end_ms, recorded_at
       FROM chunks WHERE rowid IN (${rowids.map(() => "?").join(", ")}) AND project_id = ? AND mode = ? AND end_user_id = ?`,
    )
    .all(...rowids, filter.projectId, filter.mode, filter.endUserId);
  return new Map(rows.map((r) => [r.rowid, r]));
}
