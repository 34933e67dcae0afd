import type { Database, SQLQueryBindings } from "bun:sqlite";
import type { Tenant } from "../../tenancy";
import { type Page, type PageRequest, paginate } from "../../http/pagination";
import type { Recording, RecordingError, RecordingStatus } from "./schema";

/** The upload-complete fields a recording accepted; retries are compared against them. */
export type Completion = { sha256: string | null; file_size_bytes: number | null; upload_attempt_id: string | null; client_version: string | null };

/** A recording with the storage facts the API never shows. */
export type StoredRecording = Recording & {
  /** Exact duration from the probe (the resource shows whole seconds, events the exact number). */
  duration_exact: number | null;
  /** The object in deps.storage holding the audio: staged before upload completes, the verified original after. */
  storage_key: string | null;
  staged_size: number | null;
  completion: Completion | null;
  verification: "pending" | null;
  /** When retention erased the audio alone (storage_key is then null; transcripts stay). */
  audio_erased_at: string | null;
};

/** The stored row: JSON and booleans as SQLite keeps them, plus the storage facts. */
type Row = Omit<StoredRecording, "metadata" | "consent_obtained" | "is_streaming" | "error" | "completion" | "duration_exact"> & {
  project_id: string;
  mode: string;
  metadata: string;
  consent_obtained: number | null;
  is_streaming: number;
  error: string | null;
  completion: string | null;
};

function toStored(row: Row): StoredRecording {
  return {
    id: row.id,
    end_user_id: row.end_user_id,
    device_id: row.device_id,
    name: row.name,
    status: row.status,
    duration_seconds: row.duration_seconds === null ? null : Math.round(row.duration_seconds),
    file_size_bytes: row.file_size_bytes,
    recorded_at: row.recorded_at,
    metadata: JSON.parse(row.metadata),
    upload_method: row.upload_method,
    source: row.source,
    mime_type: row.mime_type,
    is_streaming: row.is_streaming === 1,
    chunk_count: row.chunk_count,
    consent_obtained: row.consent_obtained === null ? null : row.consent_obtained === 1,
    format: row.format,
    codec: row.codec,
    sha256: row.sha256,
    error: row.error ? (JSON.parse(row.error) as RecordingError) : null,
    uploaded_at: row.uploaded_at,
    created_at: row.created_at,
    updated_at: row.updated_at,
    duration_exact: row.duration_seconds,
    storage_key: row.storage_key,
    staged_size: row.staged_size,
    completion: row.completion ? (JSON.parse(row.completion) as Completion) : null,
    verification: row.verification,
    audio_erased_at: row.audio_erased_at,
  };
}

/** The public resource of a stored recording (spec 2.7 and the documented extra fields). */
export function toRecording(r: StoredRecording): Recording {
  const { duration_exact: _d, storage_key: _k, staged_size: _s, completion: _c, verification: _v, audio_erased_at: _a, ...resource } = r;
  return resource;
}

export function insertRecording(db: Database, tenant: Tenant, r: Recording): void {
  db.query(
    `INSERT INTO recordings (id, project_id, mode, end_user_id, device_id, name, status, recorded_at, metadata, consent_obtained,
       upload_method, source, mime_type, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    r.id,
    tenant.projectId,
    tenant.mode,
    r.end_user_id,
    r.device_id,
    r.name,
    r.status,
    r.recorded_at,
    JSON.stringify(r.metadata),
    r.consent_obtained === null ? null : Number(r.consent_obtained),
    r.upload_method,
    r.source,
    r.mime_type,
    r.created_at,
    r.updated_at,
  );
}

/**
 * Recordings whose accepted completion awaits verification, across tenants (a maintenance sweep).
 * Unbounded: a verification normally lasts seconds, so only a handful are pending at once.
 */
export function listPendingVerifications(db: Database): { id: string; project_id: string; mode: Tenant["mode"] }[] {
  return db
    .query<{ id: string; project_id: string; mode: Tenant["mode"] }, []>("SELECT id, project_id, mode FROM recordings WHERE verification = 'pending'")
    .all();
}

/** A recording of the tenant's project and mode, or null. Other modules use it to load the audio behind a recording. */
export function findRecording(db: Database, tenant: Tenant, id: string): StoredRecording | null {
  const row = db
    .query<Row, [string, string, string]>("SELECT * FROM recordings WHERE id = ? AND project_id = ? AND mode = ?")
    .get(id, tenant.projectId, tenant.mode);
  return row ? toStored(row) : null;
}

/** The end users of the tenant's recordings among `ids` (each once): whose content a read of them discloses (decision 140). */
export function endUsersOfRecordings(db: Database, tenant: Tenant, ids: readonly string[]): string[] {
  return db
    .query<{ end_user_id: string }, [string, string, string]>(
      "SELECT DISTINCT end_user_id FROM recordings WHERE project_id = ? AND mode = ? AND id IN (SELECT value FROM json_each(?)) AND end_user_id IS NOT NULL",
    )
    .all(tenant.projectId, tenant.mode, JSON.stringify(ids))
    .map((r) => r.end_user_id);
}

type Patch = Partial<Omit<Row, "id" | "project_id" | "mode" | "created_at">>;

/** A transition's precondition did not hold. Callers check the state in the same transaction, so this is a bug, never a client error. */
export class RecordingStateError extends Error {}

/**
 * The one writer of a recording's columns: sets `patch` (and updated_at) where `guard`
 * holds, and throws when it did not. Private, so every change of state is a named
 * transition below whose guard says from where it may happen.
 */
function transition(db: Database, tenant: Tenant, id: string, name: string, guard: string, patch: Patch, now: Date): void {
  const entries = Object.entries({ ...patch, updated_at: now.toISOString() });
  const changed = db
    .query(`UPDATE recordings SET ${entries.map(([k]) => `${k} = ?`).join(", ")} WHERE id = ? AND project_id = ? AND mode = ? AND ${guard}`)
    .run(...(entries.map(([, v]) => v ?? null) as SQLQueryBindings[]), id, tenant.projectId, tenant.mode).changes;
  if (!changed) throw new RecordingStateError(`recording ${id}: ${name} is not allowed in its current state`);
}

/** A recording that may still receive bytes: whole-file PUTs or chunks (chunks-store.ts). */
export const TAKING_BYTES = "status IN ('pending', 'streaming') AND verification IS NULL";
const VERIFYING = "status IN ('pending', 'streaming') AND verification = 'pending'";
const HAS_VERIFIED_AUDIO = "status IN ('uploaded', 'processing', 'completed', 'failed')";

/** A whole-file PUT landed: its object becomes the staged file (replacing an earlier one). */
export function stageWholeFile(
  db: Database,
  tenant: Tenant,
  id: string,
  staged: { storageKey: string; size: number; mimeType: string | null },
  now: Date,
): void {
  transition(
    db,
    tenant,
    id,
    "stageWholeFile",
    `${TAKING_BYTES} AND is_streaming = 0`,
    { storage_key: staged.storageKey, staged_size: staged.size, mime_type: staged.mimeType },
    now,
  );
}

/** upload-complete accepted: the completion is kept and verification is pending. */
export function acceptCompletion(db: Database, tenant: Tenant, id: string, completion: Completion, now: Date): void {
  transition(
    db,
    tenant,
    id,
    "acceptCompletion",
    `${TAKING_BYTES} AND completion IS NULL`,
    { completion: JSON.stringify(completion), verification: "pending" },
    now,
  );
}

/** What verification measured of the stored original. */
export type VerifiedAudio = {
  storageKey: string;
  size: number;
  sha256: string;
  durationSeconds: number | null;
  format: string | null;
  codec: string | null;
  error: RecordingError | null;
};

/** Verification passed: the recording is uploaded, pointing at the verified original. */
export function markUploaded(db: Database, tenant: Tenant, id: string, audio: VerifiedAudio, now: Date): void {
  transition(
    db,
    tenant,
    id,
    "markUploaded",
    VERIFYING,
    {
      status: "uploaded",
      verification: null,
      storage_key: audio.storageKey,
      file_size_bytes: audio.size,
      sha256: audio.sha256,
      duration_seconds: audio.durationSeconds,
      format: audio.format,
      codec: audio.codec,
      error: audio.error ? JSON.stringify(audio.error) : null,
      uploaded_at: now.toISOString(),
    },
    now,
  );
}

/** Audio verified while no decoder could run, examined at a later decode: its length and format, which verification left null (decision 086). */
export function recordExaminedAudio(
  db: Database,
  tenant: Tenant,
  id: string,
  audio: { durationSeconds: number; format: string; codec: string },
  now: Date,
): void {
  transition(
    db,
    tenant,
    id,
    "recordExaminedAudio",
    `${HAS_VERIFIED_AUDIO} AND format IS NULL`,
    { duration_seconds: audio.durationSeconds, format: audio.format, codec: audio.codec },
    now,
  );
}

/** Verification found bytes other than the client described. */
export function markIntegrityFailure(db: Database, tenant: Tenant, id: string, error: RecordingError, now: Date): void {
  transition(db, tenant, id, "markIntegrityFailure", VERIFYING, { status: "integrity_failure", verification: null, error: JSON.stringify(error) }, now);
}

/** Verification found no staged bytes: the completion is dropped, so a retry says what to upload again. */
export function dropCompletion(db: Database, tenant: Tenant, id: string, keepStorageKey: boolean, now: Date): void {
  transition(db, tenant, id, "dropCompletion", VERIFYING, { verification: null, completion: null, ...(keepStorageKey ? {} : { storage_key: null }) }, now);
}

/** The repair of spec 3.3: a recording in integrity_failure takes a fresh upload. */
export function reopenForUpload(db: Database, tenant: Tenant, id: string, streaming: boolean, now: Date): void {
  transition(
    db,
    tenant,
    id,
    "reopenForUpload",
    "status = 'integrity_failure'",
    { status: streaming ? "streaming" : "pending", completion: null, error: null, storage_key: null, staged_size: null },
    now,
  );
}

/**
 * Moves a recording with verified audio along the processing statuses (the transcription
 * pipeline calls it); back to `uploaded` when a transcription failed for a cause that is not
 * the audio's (decision 129).
 */
export function setProcessingStatus(
  db: Database,
  tenant: Tenant,
  id: string,
  outcome: { status: "processing" | "uploaded" | "completed" } | { status: "failed"; error: RecordingError },
  now: Date,
): void {
  // A failed recording says why (its transcription's error); a completion clears an earlier failure's; processing and a return to uploaded keep it (decision 086).
  const patch: Patch =
    outcome.status === "failed"
      ? { status: "failed", error: JSON.stringify(outcome.error) }
      : outcome.status === "completed"
        ? { status: "completed", error: null }
        : { status: outcome.status };
  transition(db, tenant, id, `setProcessingStatus(${outcome.status})`, HAS_VERIFIED_AUDIO, patch, now);
}

/** Removes the row; transcriptions, summaries, chunks and search rows go with it (ON DELETE CASCADE). */
export function deleteRecordingRow(db: Database, tenant: Tenant, id: string): void {
  db.query("DELETE FROM recordings WHERE id = ? AND project_id = ? AND mode = ?").run(id, tenant.projectId, tenant.mode);
}

export type RecordingFilter = {
  endUserId?: string | null;
  deviceId?: string;
  status?: RecordingStatus;
  recordedAfter?: string;
  recordedBefore?: string;
};

export function listRecordingRows(db: Database, tenant: Tenant, filter: RecordingFilter, page: PageRequest): Page<Recording> {
  const where = ["project_id = ?", "mode = ?"];
  const params: SQLQueryBindings[] = [tenant.projectId, tenant.mode];
  const add = (clause: string, value: SQLQueryBindings | undefined | null) => {
    if (value === undefined || value === null) return;
    where.push(clause);
    params.push(value);
  };
  add("end_user_id = ?", filter.endUserId);
  add("device_id = ?", filter.deviceId);
  add("status = ?", filter.status);
  // Timestamps are stored as ISO strings in UTC; normalise the bounds the same way to compare them.
  add("recorded_at >= ?", filter.recordedAfter && new Date(filter.recordedAfter).toISOString());
  add("recorded_at < ?", filter.recordedBefore && new Date(filter.recordedBefore).toISOString());
  return paginate<Row, Recording>(db, { table: "recordings", where, params }, page, (row) => toRecording(toStored(row)));
}

export type RecordingOwner = { project_id: string; mode: "test" | "live"; end_user_id: string | null; device_id: string | null };

export function listRecordingOwners(db: Database): RecordingOwner[] {
  return db.query<RecordingOwner, []>("SELECT DISTINCT project_id, mode, end_user_id, device_id FROM recordings").all();
}

/** An owner's recordings made (recorded_at, else created_at) before `cutoff`, oldest first. */
export function listRecordingsMadeBefore(db: Database, owner: RecordingOwner, cutoff: string): StoredRecording[] {
  return db
    .query<Row, [string, string, string | null, string | null, string]>(
      `SELECT * FROM recordings WHERE project_id = ? AND mode = ? AND end_user_id IS ? AND device_id IS ? AND COALESCE(recorded_at, created_at) < ?
       ORDER BY COALESCE(recorded_at, created_at)`,
    )
    .all(owner.project_id, owner.mode, owner.end_user_id, owner.device_id, cutoff)
    .map(toStored);
}

/** A tenant's recordings of one end user, or with the given ids, created within a period: an export's selection, oldest first. */
export function selectRecordings(
  db: Database,
  tenant: Tenant,
  filter: { endUserId?: string; ids?: string[]; createdAfter?: string; createdBefore?: string },
): StoredRecording[] {
  const where = ["project_id = ?", "mode = ?"];
  const params: SQLQueryBindings[] = [tenant.projectId, tenant.mode];
  const add = (clause: string, value: string | undefined) => {
    if (value === undefined) return;
    where.push(clause);
    params.push(value);
  };
  add("end_user_id = ?", filter.endUserId);
  add("id IN (SELECT value FROM json_each(?))", filter.ids && JSON.stringify(filter.ids));
  add("created_at >= ?", filter.createdAfter);
  add("created_at < ?", filter.createdBefore);
  return db
    .query<Row, SQLQueryBindings[]>(`SELECT * FROM recordings WHERE ${where.join(" AND ")} ORDER BY created_at, id`)
    .all(...params)
    .map(toStored);
}

/** Retention's partial erasure: the recording no longer refers to stored audio. */
export function markAudioErased(db: Database, tenant: Tenant, id: string, at: string): void {
  db.query("UPDATE recordings SET storage_key = NULL, audio_erased_at = ?, updated_at = ? WHERE project_id = ? AND mode = ? AND id = ?").run(
    at,
    at,
    tenant.projectId,
    tenant.mode,
    id,
  );
}

/** Every recording of a project, both modes, with its mode: what deleting the project erases. */
export function listProjectRecordings(db: Database, projectId: string): (StoredRecording & { mode: Tenant["mode"] })[] {
  return db
    .query<Row & { mode: Tenant["mode"] }, [string]>("SELECT * FROM recordings WHERE project_id = ? ORDER BY created_at, id")
    .all(projectId)
    .map((row) => ({ ...toStored(row), mode: row.mode }));
}
