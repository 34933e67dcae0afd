import type { Database } from "bun:sqlite";
import type { Tenant } from "../../tenancy";
import { RecordingStateError, TAKING_BYTES } from "./store";

/** A streaming recording's chunks (decision 033): one row per index received, its object and size. */
export type Chunk = { chunk_index: number; storage_key: string; size_bytes: number };

/** A chunk as stored, with when it was received (its latest sending, for a re-sent index). */
export type ReceivedChunk = Chunk & { received_at: string };

/** Records a received chunk (a re-sent index replaces the earlier one) and returns the key it replaced, if any. */
export function upsertChunk(db: Database, tenant: Tenant, recordingId: string, chunk: Chunk, now: Date): string | null {
  const previous = db
    .query<{ storage_key: string }, [string, number, string, string]>(
      "SELECT storage_key FROM recording_chunks WHERE recording_id = ? AND chunk_index = ? AND project_id = ? AND mode = ?",
    )
    .get(recordingId, chunk.chunk_index, tenant.projectId, tenant.mode);
  db.query(
    `INSERT INTO recording_chunks (recording_id, project_id, mode, chunk_index, storage_key, size_bytes, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (recording_id, chunk_index) DO UPDATE SET storage_key = excluded.storage_key, size_bytes = excluded.size_bytes,
       created_at = excluded.created_at`,
  ).run(recordingId, tenant.projectId, tenant.mode, chunk.chunk_index, chunk.storage_key, chunk.size_bytes, now.toISOString());
  // chunk_count only grows (one past the highest index seen): recounting rows would forget chunks
  // whose objects were lost (deleteChunkRows), and a re-sent early chunk would hide a missing last one.
  const changed = db
    .query(
      `UPDATE recordings SET chunk_count = MAX(chunk_count, ?), is_streaming = 1, status = 'streaming', updated_at = ? WHERE id = ? AND project_id = ? AND mode = ? AND ${TAKING_BYTES}`,
    )
    .run(chunk.chunk_index + 1, now.toISOString(), recordingId, tenant.projectId, tenant.mode).changes;
  if (!changed) throw new RecordingStateError(`recording ${recordingId}: a chunk cannot be added in its current state`);
  return previous && previous.storage_key !== chunk.storage_key ? previous.storage_key : null;
}

/** Bytes of the recording's received chunks, leaving out one index (the chunk about to be replaced). */
export function chunkBytes(db: Database, tenant: Tenant, recordingId: string, exceptIndex: number | null = null): number {
  return (
    db
      .query<{ n: number | null }, [string, string, string, number]>(
        "SELECT SUM(size_bytes) AS n FROM recording_chunks WHERE recording_id = ? AND project_id = ? AND mode = ? AND chunk_index IS NOT ?",
      )
      .get(recordingId, tenant.projectId, tenant.mode, exceptIndex ?? -1)?.n ?? 0
  );
}

export function listChunks(db: Database, tenant: Tenant, recordingId: string): ReceivedChunk[] {
  return db
    .query<ReceivedChunk, [string, string, string]>(
      "SELECT chunk_index, storage_key, size_bytes, created_at AS received_at FROM recording_chunks WHERE recording_id = ? AND project_id = ? AND mode = ? ORDER BY chunk_index",
    )
    .all(recordingId, tenant.projectId, tenant.mode);
}

/**
 * Forgets chunk rows: all of them after assembly or a repair, or those whose objects were lost.
 * chunk_count is left as it was, so every forgotten chunk is still known to be missing.
 */
export function deleteChunkRows(db: Database, tenant: Tenant, recordingId: string, keys?: string[]): void {
  const where = "recording_id = ? AND project_id = ? AND mode = ?";
  if (!keys) db.query(`DELETE FROM recording_chunks WHERE ${where}`).run(recordingId, tenant.projectId, tenant.mode);
  else for (const key of keys) db.query(`DELETE FROM recording_chunks WHERE ${where} AND storage_key = ?`).run(recordingId, tenant.projectId, tenant.mode, key);
}

/** Whose recordings there are: each project, mode, end user and device that has any (retention resolves its configuration per owner). */
