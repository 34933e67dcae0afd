import type { Deps } from "../../deps";
import type { Tenant } from "../../tenancy";
import type { JobContracts } from "../../jobs/contracts";
import { type Job, PermanentJobError } from "../../jobs/queue";
import { MissingModelError } from "../../engines/missing-model";
import { findRecording } from "../recordings/service";
import { findTranscription, latestCompletedTranscription } from "../transcriptions/service";
import { chunkSegments } from "./chunking";
import { adoptIndexModel, countPendingChunks, type IndexState, pendingChunks, readIndexState, replaceRecordingChunks } from "./store";
import { buildCellIndex, cellIndexWork, dropCellIndex, readyLibraryOwners, warmCellCodes } from "./vector-cells";
import { rebuildVectorTable, storeVectors } from "./vector-index";

/** Enqueued by the pipeline (contract 4) in the transaction that completes a transcription. */
export const INDEX_TRANSCRIPTION_JOB = "search.index_transcription";
/** Embeds every chunk that lacks a vector of the current index generation (after a model change, or a model installed late). */
export const REINDEX_JOB = "search.reindex";
/** Builds the cell index of one large library (decision 192). */
export const BUILD_CELLS_JOB = "search.build_cells";

export type IndexTranscriptionPayload = JobContracts[typeof INDEX_TRANSCRIPTION_JOB];

type IndexDeps = Pick<Deps, "db" | "clock" | "queue" | "log" | "engines" | "searchCounts">;

const EMBED_BATCH = 32;

/**
 * Compares the embedder with the vector index (immich's check at start). Another model
 * or dimension rebuilds the vector table empty and queues the durable re-index; chunks
 * stay keyword-searchable meanwhile. Throws MissingModelError when no model is installed.
 */
export async function ensureIndexCurrent(deps: IndexDeps): Promise<IndexState> {
  const { embedder } = deps.engines;
  const dimension = await embedder.dimension();
  const state = readIndexState(deps.db);
  if (state.model === embedder.model && state.dimension === dimension) return state;
  const now = deps.clock.now();
  deps.db.transaction(() => {
    // Re-read inside the transaction: a concurrent job may have rebuilt the table already.
    const current = readIndexState(deps.db);
    if (current.model === embedder.model && current.dimension === dimension) return;
    if (current.model === null && current.dimension === dimension) adoptIndexModel(deps.db, embedder.model, now);
    else rebuildVectorTable(deps.db, embedder.model, dimension, now);
  })();
  const next = readIndexState(deps.db);
  if (next.generation !== state.generation) {
    deps.log.info("search index rebuilt for a new embedding model", { from: state.model, to: embedder.model, dimension });
    deps.queue.enqueue(REINDEX_JOB, {}, { dedupeKey: REINDEX_JOB });
  }
  return next;
}

/** Embeds pending chunks (of one recording, or all) in batches; returns how many got vectors. */
async function embedPending(deps: IndexDeps, recordingId?: string): Promise<number> {
  let done = 0;
  for (;;) {
    const state = await ensureIndexCurrent(deps);
    const batch = pendingChunks(deps.db, state.generation, EMBED_BATCH, recordingId);
    if (batch.length === 0) return done;
    const vectors = await deps.engines.embedder.embed(batch.map((c) => c.text));
    // A re-index started meanwhile: loop, and the next pass uses the new table.
    if (storeVectors(deps.db, batch, vectors, state.generation)) done += batch.length;
  }
}

/**
 * Chunks a completed transcription and indexes it. Idempotent: it replaces the recording's
 * chunks, and skips a transcription that is gone or superseded by a newer completed one.
 * The chunks are stored before embedding, so keyword search works even without a model.
 */
export async function indexTranscription(deps: IndexDeps, payload: IndexTranscriptionPayload): Promise<void> {
  const tenant: Tenant = { projectId: payload.project_id, mode: payload.mode };
  const transcription = findTranscription(deps.db, tenant, payload.transcription_id);
  if (!transcription || transcription.status !== "completed") return;
  if (latestCompletedTranscription(deps.db, tenant, transcription.recording_id)?.id !== transcription.id) return;
  const recording = findRecording(deps.db, tenant, transcription.recording_id);
  if (!recording) return;
  const owner = { recordingId: recording.id, transcriptionId: transcription.id, endUserId: recording.end_user_id, recordedAt: recording.recorded_at };
  deps.db.transaction(() => replaceRecordingChunks(deps, tenant, owner, chunkSegments(transcription.segments), deps.clock.now()))();
  try {
    await embedPending(deps, recording.id);
  } catch (err) {
    if (!(err instanceof MissingModelError)) throw err;
    // Keyword search already works; the periodic check embeds these once a model is installed.
    deps.log.warn("transcript indexed for keywords only: no embedding model", { transcription_id: transcription.id, error: err.message });
  }
}

/**
 * The dimension check of issue 6: `serve` runs it once at start (in the background: it
 * must never delay or crash boot), and the periodic task repeats it so a model installed
 * or swapped while the server runs is picked up. Queues the re-index when chunks lack
 * vectors; with no model installed there is nothing to do yet.
 */
export async function checkSearchIndex(deps: IndexDeps): Promise<void> {
  try {
    const state = await ensureIndexCurrent(deps);
    if (countPendingChunks(deps.db, state.generation) > 0) deps.queue.enqueue(REINDEX_JOB, {}, { dedupeKey: REINDEX_JOB });
  } catch (err) {
    if (!(err instanceof MissingModelError)) throw err;
    return;
  }
  await maintainCellIndexes(deps);
  // Once at start, then every few minutes: any ready index whose codes are not held (or missed a change) is loaded (decision 216).
  for (const owner of readyLibraryOwners(deps.db)) await warmCellCodes(deps.db, owner);
}

/**
 * Queues a build for each library that needs a cell index (one job per library at a time:
 * the dedupe key), and drops the indexes of libraries that shrank below use.
 */
export async function maintainCellIndexes(deps: Pick<IndexDeps, "db" | "queue">, minChunks?: number): Promise<void> {
  for (const work of cellIndexWork(deps.db, minChunks)) {
    if (work.action === "drop") await dropCellIndex(deps.db, work.libraryId);
    else
      deps.queue.enqueue(
        BUILD_CELLS_JOB,
        { project_id: work.projectId, mode: work.mode, end_user_id: work.endUserId },
        { dedupeKey: `${BUILD_CELLS_JOB}:${work.projectId}:${work.mode}:${work.endUserId}` },
      );
  }
}

/** search.index_transcription's handler: chunks and embeds one transcription. */
export function indexTranscriptionJob(deps: IndexDeps) {
  return (job: Job<IndexTranscriptionPayload>) => indexTranscription(deps, job.payload);
}

/** search.reindex's handler: embeds every chunk lacking a vector of the current generation. */
export function reindexJob(deps: IndexDeps) {
  return async () => {
    try {
      deps.log.info("search re-index finished", { embedded: await embedPending(deps) });
    } catch (err) {
      // Retrying cannot install a model; the periodic check queues this job again once one is there.
      if (err instanceof MissingModelError) throw new PermanentJobError(err.message);
      throw err;
    }
  };
}

/** search.build_cells' handler: (re)builds one library's cell index, yielding to the server between batches. */
export function buildCellsJob(deps: IndexDeps) {
  return async (job: Job<JobContracts[typeof BUILD_CELLS_JOB]>) => {
    const owner = { projectId: job.payload.project_id, mode: job.payload.mode, endUserId: job.payload.end_user_id };
    const started = Date.now();
    const built = await buildCellIndex(deps.db, owner, deps.clock.now());
    const held = built !== null && (await warmCellCodes(deps.db, owner));
    deps.log.info("search cell index built", { end_user_id: owner.endUserId, ...built, codes_in_memory: held, ms: Date.now() - started });
  };
}
