import type { Database, SQLQueryBindings } from "bun:sqlite";
import { sha256Hex } from "../../crypto";
import type { Tenant } from "../../tenancy";
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

/** vec0 partition keys cannot be NULL; recordings without an end user are kept under "". */
export const partitionOf = (endUserId: string | null) => endUserId ?? "";

/** The single FTS5 token naming (project, mode, end user); hex, so no tokenizer splits it. */
export function ownerToken(tenant: Tenant, endUserId: string | null): string {
  return `o${sha256Hex(`${tenant.projectId}|${tenant.mode}|${partitionOf(endUserId)}`).slice(0, 24)}`;
}

/** Replaces a recording's chunks (re-transcription); the triggers clear the old ones from both indexes. */
export function replaceRecordingChunks({ db, searchCounts }: SearchStore, tenant: Tenant, owner: ChunkOwner, chunks: Chunk[], now: Date): void {
  db.query("DELETE FROM chunks WHERE recording_id = ? AND project_id = ? AND mode = ?").run(owner.recordingId, tenant.projectId, tenant.mode);
  const insert = db.query(
    `INSERT INTO chunks (id, project_id, mode, end_user_id, recording_id, transcription_id, seq, start_ms, end_ms, speaker, recorded_at, text, owner_token, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const token = ownerToken(tenant, owner.endUserId);
  searchCounts.forget(token);
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

export type PendingChunk = {
  rowid: number;
  project_id: string;
  mode: string;
  end_user_id: string | null;
  recording_id: string;
  recorded_at: string | null;
  text: string;
};

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

export function countPendingChunks(db: Database, generation: number): number {
  return db.query<{ n: number }, [number]>("SELECT COUNT(*) AS n FROM chunks WHERE embedded_generation < ?").get(generation)!.n;
}

export function chunkFilterSql(filter: ChunkFilter): { sql: string; params: SQLQueryBindings[] } {
  const parts: string[] = [];
  const params: SQLQueryBindings[] = [];
  if (filter.recordingIds) {
    parts.push(`recording_id IN (${filter.recordingIds.map(() => "?").join(", ") || "NULL"})`);
    params.push(...filter.recordingIds);
  }
  if (filter.recordedAfter) {
    parts.push(`recorded_at >= ?`);
    params.push(filter.recordedAfter);
  }
  if (filter.recordedBefore) {
    // vec0 cannot hold NULL, so an unknown recorded_at is stored there as "", which sorts
    // before every date: exclude it, as NULL is excluded on the keyword side.
    parts.push(`recorded_at > ''`, `recorded_at < ?`);
    params.push(filter.recordedBefore);
  }
  return { sql: parts.map((p) => ` AND ${p}`).join(""), params };
}

/** Counts only order and budget the words, so some staleness is fine; counting a common word is not cheap. */
const DOC_COUNT_TTL_MS = 10 * 60_000;
const DOC_COUNT_MAX_TERMS = 50_000;
/** The cache key of counts over the whole index, every owner's chunks (owner tokens start with "o"). */
const ANY_OWNER = "*";

/** How many chunks a walk from the newest match back counted (up to its cap), and the newest and oldest rowids it read. */
export type Reach = { count: number; newest: number; oldest: number };

/**
 * Positive document counts per owner token (or ANY_OWNER) and word, of one connection; one
 * per Deps (boot.ts). Counting walks postings, so positive counts are kept; a zero is not
 * (counting an absent word is cheap, and a kept zero would hide a word indexed a moment later).
 * Beside them, per large library, the bit distance its vector scans may stop at (decision 099).
 */
export class DocumentCounts {
  private at = Date.now();
  private size = 0;
  private byOwner = new Map<string, Map<string, { count: number }>>();
  private scanBounds = new Map<string, number>();

  constructor(private readonly db: Database) {}

  /**
   * How many chunks match `match`, counted through FTS5 itself so a word is stemmed as the
   * index stems it, and up to `cap` (-1: all) so counting stops where the answer stops mattering.
   * No rowid is read: a library's count walks its every chunk (~60 ms at 1M, a quarter more with rowids).
   */
  count(owner: string, key: string, match: string, cap = -1): number {
    return this.cached(
      owner,
      key,
      () =>
        this.db
          .query<{ count: number }, [string, number]>("SELECT COUNT(*) AS count FROM (SELECT 1 FROM chunks_fts WHERE chunks_fts MATCH ? LIMIT ?)")
          .get(match, cap)!,
    ).count;
  }

  /**
   * The newest `cap` matches of `match` counted from the newest back, with the oldest rowid
   * they reach: past the cap, how far back a word's newest matches go tells how sparse it
   * is where a capped keyword query scores it (decision 200), at the price of one capped walk.
   */
  newest(owner: string, key: string, match: string, cap: number): Reach {
    // Keyed apart from count()'s entries (words and "" never start with "<") and by cap, so each entry is of the kind its method stored.
    return this.cached(
      owner,
      `<${cap}<${key}`,
      () =>
        this.db
          .query<Reach, [string, number]>(
            "SELECT COUNT(*) AS count, MAX(rowid) AS newest, MIN(rowid) AS oldest FROM (SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY rowid DESC LIMIT ?)",
          )
          .get(match, cap)!,
    );
  }

  private cached<T extends { count: number }>(owner: string, key: string, walk: () => T): T {
    if (Date.now() - this.at > DOC_COUNT_TTL_MS || this.size > DOC_COUNT_MAX_TERMS) this.close();
    let counts = this.byOwner.get(owner);
    if (!counts) this.byOwner.set(owner, (counts = new Map()));
    const cached = counts.get(key) as T | undefined;
    if (cached !== undefined) return cached;
    const walked = walk();
    if (walked.count > 0) {
      counts.set(key, walked);
      this.size++;
    }
    return walked;
  }

  /** Called when an owner's chunks change, so its next search counts afresh (and so does every search, for counts over the whole index). */
  forget(owner: string): void {
    for (const key of [owner, ANY_OWNER]) {
      const counts = this.byOwner.get(key);
      if (!counts) continue;
      this.size -= counts.size;
      this.byOwner.delete(key);
    }
  }

  /**
   * The bit distance within which the owner's last quantized vector scan found its
   * candidates, plus a margin: the next scan looks no further unless that finds too few.
   * Kept when the owner's chunks change (a recording more barely moves it, and a bound that
   * turns out too tight only costs one more scan); dropped with the counts.
   */
  scanBound(owner: string): number | undefined {
    return this.scanBounds.get(owner);
  }

  learnScanBound(owner: string, bound: number): void {
    this.scanBounds.set(owner, bound);
  }

  /** Drops every count and bound (also how the cache starts over past its age or size). */
  close(): void {
    this.at = Date.now();
    this.size = 0;
    this.byOwner = new Map();
    this.scanBounds = new Map();
  }
}

/** A connection and its document counts: what keyword search and chunk writes need (Deps has both). */
export type SearchStore = { db: Database; searchCounts: DocumentCounts };

/** Postings a keyword query may walk: bounds its cost on large libraries. */
const POSTINGS_BUDGET = 5_000;
/**
 * Matches a query of common words only scores: the newest of its sparsest word's. bm25()
 * costs ~1.3 us a match, so 5,000 took ~7 ms, a third of the 25 ms a search at 1M chunks
 * may take; the ranking within them is BM25's, only the stretch scored is shorter (decision 200).
 */
const COMMON_SCORED = 2_000;

const ownerChunkCount = (counts: DocumentCounts, owner: string) => counts.count(owner, "", `owner_token : "${owner}"`);
/**
 * A word's matches over the whole index, newest first: its newest COMMON_SCORED + 1 (the
 * stretch a query of common words scores, whose reach ranks common words), then, only when
 * their density leaves it unclear, on just past the budget. A word whose newest matches are
 * so dense that the index would hold more than the budget of them at that density is common
 * without the longer walk: at 1M chunks that walk of 5,001 postings was ~1.2 ms of CPU a new
 * word, half of a fresh keyword query (decision 217). Its count then reads as just past the
 * budget, as a walk would have found it in all but a word said far more lately than before.
 */
function indexReach(counts: DocumentCounts, word: string): Reach {
  const match = `text : ${quoted(word)}`;
  const near = counts.newest(ANY_OWNER, word, match, COMMON_SCORED + 1);
  if (near.count <= COMMON_SCORED) return near;
  const atThatDensity = (near.count * near.newest) / (near.newest - near.oldest + 1);
  if (atThatDensity > POSTINGS_BUDGET) return { ...near, count: POSTINGS_BUDGET + 1 };
  return { ...counts.newest(ANY_OWNER, word, match, POSTINGS_BUDGET + 1), oldest: near.oldest };
}
const ownerHasWord = (counts: DocumentCounts, owner: string, word: string) =>
  counts.count(owner, word, `owner_token : "${owner}" AND text : ${quoted(word)}`, 1) > 0;

/**
 * The words worth searching in a large library, rarest first. They are counted over the
 * whole index, because the whole index's postings are what the query walks (bm25() weighs
 * each word over all of them, and the match runs without the owner token, see
 * keywordCandidates); counting within the owner token meant walking the end user's postings
 * once per word, ~5 ms each at 100k chunks. Words absent from the end user's chunks are
 * dropped (they match nothing here). The rest are kept, rarest first, while their postings
 * fit a budget, and the rarest always stays, so a query with any matching word is never
 * emptied. The common words left out carry little BM25 weight (FTS5 floors the idf of a
 * word in half the chunks), walking their postings was most of a keyword query's cost, and
 * the vector side still sees the whole query. Each word is counted from the newest match
 * back (indexReach): common words (past the budget) rank by how far back their newest
 * COMMON_SCORED matches reach, the sparsest first, and a query of common words only scores
 * those of that one (keywordCandidates). Counting common words further, to rank them by
 * their whole count, cost more than scoring (decisions 200, 217).
 */
function informativeWords(counts: DocumentCounts, owner: string, words: string[]): { kept: string[]; postings: number } {
  const ranked = words
    .map((w) => ({ w, ...indexReach(counts, w) }))
    .filter((x) => x.count > 0)
    .sort((a, b) => a.count - b.count || a.oldest - b.oldest);
  const kept: string[] = [];
  let postings = 0;
  for (const { w, count } of ranked) {
    if (kept.length > 0 && postings + count > POSTINGS_BUDGET) break;
    if (!ownerHasWord(counts, owner, w)) continue;
    kept.push(w);
    postings += count;
  }
  return { kept, postings };
}

/** How many chunks an end user has (cached as the word counts are): decides how their library is searched. */
export const libraryChunkCount = (store: SearchStore, filter: ChunkFilter) => ownerChunkCount(store.searchCounts, ownerToken(filter, filter.endUserId));

/**
 * The first `limit` of `ranked` (rowids, best first) that are the end user's and pass the
 * recording and date filters, checked against the chunks table in batches (doubling), so a
 * long ranking is read only as deep as it takes.
 */
function firstWithinFilter(db: Database, filter: ChunkFilter, ranked: Iterable<number>, limit: number): number[] {
  const extra = chunkFilterSql(filter);
  const allowed = db.query<{ rowid: number }, SQLQueryBindings[]>(
    `SELECT rowid FROM chunks WHERE rowid IN (SELECT value FROM json_each(?)) AND project_id = ? AND mode = ? AND end_user_id = ?${extra.sql}`,
  );
  const kept: number[] = [];
  let batch: number[] = [];
  let size = limit * 2;
  const check = () => {
    const ok = new Set(allowed.all(JSON.stringify(batch), filter.projectId, filter.mode, filter.endUserId, ...extra.params).map((r) => r.rowid));
    kept.push(...batch.filter((rowid) => ok.has(rowid)));
    batch = [];
    size *= 2;
  };
  for (const rowid of ranked) {
    batch.push(rowid);
    if (batch.length < size) continue;
    check();
    if (kept.length >= limit) break;
  }
  if (batch.length > 0 && kept.length < limit) check();
  return kept.slice(0, limit);
}

/** Rowids in the order a query gives them, read lazily. */
function* rowids(rows: Iterable<{ rowid: number }>): Generator<number> {
  for (const row of rows) yield row.rowid;
}

/**
 * Best BM25 matches of any query word, best first, within the end user's chunks. A library
 * within the postings budget is scored by rankLibrary (BM25 over the end user's own chunks,
 * without bm25()'s walk over every tenant's postings), best first and newest on a tie. A
 * larger one is ranked by FTS5's bm25() over the informative words, matched without the
 * owner token: bm25() counts every phrase's rows on each query, the owner token's rows are
 * the whole library (~6 ms of a 9 ms query at 100k chunks), and the owner token adds nothing
 * to a score (weight 0), so no score changes. The informative words' postings over the whole
 * index fit the budget, so ranking all their matches is bounded; the end user's rows are
 * then kept in rank order.
 */
export function keywordCandidates({ db, searchCounts }: SearchStore, filter: ChunkFilter, words: string[], limit: number): number[] {
  const owner = ownerToken(filter, filter.endUserId);
  const total = ownerChunkCount(searchCounts, owner);
  if (total === 0) return [];
  if (total <= POSTINGS_BUDGET) {
    const scores = rankLibrary(db, owner, words, POSTINGS_BUDGET);
    return firstWithinFilter(
      db,
      filter,
      [...scores].sort((a, b) => b[1] - a[1] || b[0] - a[0]).map(([rowid]) => rowid),
      limit,
    );
  }
  const useful = informativeWords(searchCounts, owner, words);
  if (useful.kept.length === 0) return [];
  const match = `text : (${useful.kept.map(quoted).join(" OR ")})`;
  // Only common words (the rarest kept is past the budget alone): bm25() scores the newest
  // COMMON_SCORED of its matches, not all. In a library of a million chunks most words are
  // in over 5,000, and scoring all of them cost more than the whole search's budget
  // (decisions 192, 200); a common word carries little weight, and the vector side sees the query.
  const ranked =
    useful.postings <= POSTINGS_BUDGET
      ? db.query<{ rowid: number }, [string]>("SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY bm25(chunks_fts, 0.0, 1.0)").iterate(match)
      : db
          .query<{ rowid: number }, [string, number]>(
            "SELECT rowid FROM (SELECT rowid, bm25(chunks_fts, 0.0, 1.0) AS score FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY rowid DESC LIMIT ?) ORDER BY score",
          )
          .iterate(match, COMMON_SCORED);
  return firstWithinFilter(db, filter, rowids(ranked), limit);
}

/**
 * The chunks behind candidate rowids, re-checked against the tenant, end user and filters:
 * isolation never rests on a hash alone, and both candidate lists answer to the same filters.
 */
export function chunksByRowid(db: Database, filter: ChunkFilter, rowids: number[]): Map<number, ChunkRecord> {
  if (rowids.length === 0) return new Map();
  const extra = chunkFilterSql(filter);
  const rows = db
    .query<ChunkRecord, SQLQueryBindings[]>(
      `SELECT rowid, id AS chunk_id, recording_id, transcription_id, text AS chunk_text, speaker, start_ms, end_ms, recorded_at
       FROM chunks WHERE rowid IN (${rowids.map(() => "?").join(", ")}) AND project_id = ? AND mode = ? AND end_user_id = ?${extra.sql}`,
    )
    .all(...rowids, filter.projectId, filter.mode, filter.endUserId, ...extra.params);
  return new Map(rows.map((r) => [r.rowid, r]));
}
