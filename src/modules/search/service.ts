import type { Database } from "bun:sqlite";
import type { Deps } from "../../deps";
import type { Principal } from "../../http/auth";
import { bodyField, confineToEndUser } from "../../http/access";
import { ApiError } from "../../http/errors";
import { loadEndUser } from "../end-users/service";
import type { SearchBody, SearchResult } from "./schema";
import { type ChunkFilter, chunksByRowid, keywordCandidates, readIndexState } from "./store";
import { forgetCellCodes } from "./vector-cells";
import { vectorCandidates, vectorScanFor } from "./vector-index";

/** The keyword index's document counts, a cache the composition root builds once (decision 085). */
export { DocumentCounts } from "./store";

type SearchDeps = Pick<Deps, "db" | "log" | "engines" | "searchCounts">;

/** Reciprocal rank fusion constant: 60 is the value of the original paper and of most hybrid engines. */
const RRF_K = 60;

/** Query words for FTS5: letters and digits only, so no user text is ever read as FTS5 syntax. */
export function queryWords(query: string): string[] {
  return [...new Set(query.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [])].slice(0, 64);
}

/**
 * The query's vector, or null when the index cannot answer by meaning right now (no
 * model installed, or a re-index for a new model under way): search then runs on
 * keywords alone rather than failing.
 */
async function queryVector(deps: SearchDeps, query: string): Promise<Float32Array | null> {
  const { embedder } = deps.engines;
  try {
    const state = readIndexState(deps.db);
    if (state.model !== embedder.model || state.dimension !== (await embedder.dimension())) return null;
    const [vector] = await embedder.embed([query]);
    return vector ?? null;
  } catch (err) {
    deps.log.warn("search without vectors: the embedder failed", { error: String((err as Error)?.message ?? err) });
    return null;
  }
}

/**
 * Hybrid retrieval: vector KNN and BM25 candidates fused by reciprocal rank, best first.
 * Scores are the fused RRF values (higher is better; comparable within one response).
 */
export async function retrieveChunks(deps: SearchDeps, filter: ChunkFilter, query: string, limit: number): Promise<SearchResult[]> {
  // sqlite-vec's KNN cost grows with k (it keeps a sorted top-k per scanned block), so the
  // vector side fetches twice the limit; BM25 candidates are cheap once the postings are read.
  const vector = await queryVector(deps, query);
  const lists = [keywordCandidates(deps, filter, queryWords(query), Math.max(limit * 4, 40))];
  if (vector) lists.push(vectorCandidates(deps, filter, vector, Math.max(limit * 2, 16), vectorScanFor(deps, filter)));
  const fused = new Map<number, number>();
  for (const list of lists) list.forEach((rowid, rank) => fused.set(rowid, (fused.get(rowid) ?? 0) + 1 / (RRF_K + rank + 1)));
  const best = [...fused].sort((a, b) => b[1] - a[1] || a[0] - b[0]).slice(0, limit);
  const rows = chunksByRowid(
    deps.db,
    filter,
    best.map(([rowid]) => rowid),
  );
  return best.flatMap(([rowid, score]) => {
    const row = rows.get(rowid);
    if (!row) return [];
    const { rowid: _r, ...chunk } = row;
    return [{ ...chunk, score: Number(score.toFixed(6)) }];
  });
}

/**
 * The end user a search or Ask runs for: the key's own, else the one named (required),
 * which must exist in the key's project and mode (an unknown one is 404, not an empty answer).
 */
export function requireEndUser(db: Database, principal: Principal, endUserId: string | null | undefined): string {
  const confined = confineToEndUser(principal, endUserId);
  if (!confined) throw new ApiError("validation_error", "end_user_id is required unless the key is scoped to an end user.", { param: "end_user_id" });
  return loadEndUser(db, principal, confined, bodyField("end_user_id")).id;
}

/** POST /recordings/search (spec 4.3). */
export async function searchRecordings(deps: SearchDeps & Pick<Deps, "audit">, principal: Principal, body: SearchBody): Promise<{ results: SearchResult[] }> {
  const filter: ChunkFilter = {
    projectId: principal.projectId,
    mode: principal.mode,
    endUserId: requireEndUser(deps.db, principal, body.end_user_id),
    recordingIds: body.recording_ids,
    recordedAfter: body.recorded_after ? new Date(body.recorded_after).toISOString() : undefined,
    recordedBefore: body.recorded_before ? new Date(body.recorded_before).toISOString() : undefined,
  };
  const results = await retrieveChunks(deps, filter, body.query, body.limit);
  // The chunk ids and their recordings, never the query: it may itself name a patient.
  if (results.length > 0)
    await deps.audit.access(
      principal,
      "search.results.read",
      results.flatMap((r) => [r.chunk_id, r.recording_id]),
      { endUsers: [filter.endUserId] },
    );
  return { results };
}

/**
 * An erased recording's chunks leave the cell indexes by trigger; the int8 codes a server
 * holds in memory (decision 216) go at once with them, and are reloaded without them later.
 */
export function registerSearchCascades(deps: Pick<Deps, "db" | "cascades">): void {
  deps.cascades.on("recordingErased", "search", () => forgetCellCodes(deps.db));
}
