import type { Database, SQLQueryBindings } from "bun:sqlite";
import type { Tenant } from "../../tenancy";
import { type Page, type PageRequest, paginate } from "../../http/pagination";
import type { SpeakerCountHint } from "../../engines/diarizer";
import type { Transcription } from "./schema";

/** The stored row: JSON as text, plus the owner and the language that was asked for. */
type TranscriptionRow = Omit<Transcription, "segments" | "speakers" | "speaker_turns" | "error"> & {
  project_id: string;
  mode: string;
  end_user_id: string | null;
  requested_language: string | null;
  requested_min_speakers: number | null;
  requested_max_speakers: number | null;
  model_sha256: string | null;
  segments: string;
  speakers: string;
  speaker_turns: string;
  error: string | null;
};

/** A row with what the API does not show (owner, requested language and speaker counts, the model file's digest) beside the record. */
export type StoredTranscription = {
  record: Transcription;
  endUserId: string | null;
  requestedLanguage: string | null;
  requestedSpeakers: SpeakerCountHint;
  modelSha256: string | null;
};

function toStored(row: TranscriptionRow): StoredTranscription {
  return {
    record: {
      id: row.id,
      recording_id: row.recording_id,
      status: row.status,
      language: row.language,
      text: row.text,
      duration_seconds: row.duration_seconds,
      segments: JSON.parse(row.segments),
      speakers: JSON.parse(row.speakers),
      speaker_turns: JSON.parse(row.speaker_turns),
      error: row.error ? JSON.parse(row.error) : null,
      model: row.model,
      diarization: row.diarization,
      revision: row.revision,
      created_at: row.created_at,
      started_at: row.started_at,
      completed_at: row.completed_at,
      failed_at: row.failed_at,
    },
    endUserId: row.end_user_id,
    requestedLanguage: row.requested_language,
    requestedSpeakers: { minSpeakers: row.requested_min_speakers, maxSpeakers: row.requested_max_speakers },
    modelSha256: row.model_sha256,
  };
}

export function insertTranscription(db: Database, tenant: Tenant, t: Transcription, owner: Omit<StoredTranscription, "record" | "modelSha256">): void {
  db.query(
    `INSERT INTO transcriptions (id, project_id, mode, recording_id, end_user_id, status, requested_language, requested_min_speakers, requested_max_speakers, language, created_at, started_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    t.id,
    tenant.projectId,
    tenant.mode,
    t.recording_id,
    owner.endUserId,
    t.status,
    owner.requestedLanguage,
    owner.requestedSpeakers.minSpeakers ?? null,
    owner.requestedSpeakers.maxSpeakers ?? null,
    t.language,
    t.created_at,
    t.started_at,
  );
}

export function findStoredTranscription(db: Database, tenant: Tenant, id: string): StoredTranscription | null {
  const row = db
    .query<TranscriptionRow, [string, string, string]>("SELECT * FROM transcriptions WHERE id = ? AND project_id = ? AND mode = ?")
    .get(id, tenant.projectId, tenant.mode);
  return row ? toStored(row) : null;
}

/** Contract 4: a transcription of the tenant by id. */
export function findTranscription(db: Database, tenant: Tenant, id: string): Transcription | null {
  return findStoredTranscription(db, tenant, id)?.record ?? null;
}

/** Contract 4: the newest completed transcription of a recording (reprocessing keeps older ones). */
export function latestCompletedTranscription(db: Database, tenant: Tenant, recordingId: string): Transcription | null {
  const row = db
    .query<TranscriptionRow, [string, string, string]>(
      `SELECT * FROM transcriptions WHERE recording_id = ? AND project_id = ? AND mode = ? AND status = 'completed'
       ORDER BY completed_at DESC, id DESC LIMIT 1`,
    )
    .get(recordingId, tenant.projectId, tenant.mode);
  return row ? toStored(row).record : null;
}

export function findProcessingTranscription(db: Database, tenant: Tenant, recordingId: string): Transcription | null {
  const row = db
    .query<TranscriptionRow, [string, string, string]>(
      "SELECT * FROM transcriptions WHERE recording_id = ? AND project_id = ? AND mode = ? AND status = 'processing'",
    )
    .get(recordingId, tenant.projectId, tenant.mode);
  return row ? toStored(row).record : null;
}

/** processing -> completed; false when the row is no longer processing (a second run of the job, or deleted). */
export function markTranscriptionCompleted(
  db: Database,
  tenant: Tenant,
  id: string,
  result: Pick<Transcription, "language" | "text" | "duration_seconds" | "segments" | "speakers" | "speaker_turns" | "model" | "diarization"> & {
    model_sha256: string | null;
    completed_at: string;
  },
): boolean {
  return (
    db
      .query(
        `UPDATE transcriptions SET status = 'completed', language = ?, text = ?, duration_seconds = ?, segments = ?, speakers = ?, speaker_turns = ?, model = ?, model_sha256 = ?, diarization = ?, completed_at = ?
         WHERE id = ? AND project_id = ? AND mode = ? AND status = 'processing'`,
      )
      .run(
        result.language,
        result.text,
        result.duration_seconds,
        JSON.stringify(result.segments),
        JSON.stringify(result.speakers),
        JSON.stringify(result.speaker_turns),
        result.model,
        result.model_sha256,
        result.diarization,
        result.completed_at,
        id,
        tenant.projectId,
        tenant.mode,
      ).changes === 1
  );
}

/** A completed transcription's content becomes its revision `revision` (revisions-store.ts keeps every one). */
export function writeLatestRevision(
  db: Database,
  tenant: Tenant,
  id: string,
  content: Pick<Transcription, "text" | "segments" | "speakers" | "revision">,
): void {
  db.query(
    "UPDATE transcriptions SET text = ?, segments = ?, speakers = ?, revision = ? WHERE id = ? AND project_id = ? AND mode = ? AND status = 'completed'",
  ).run(content.text, JSON.stringify(content.segments), JSON.stringify(content.speakers), content.revision, id, tenant.projectId, tenant.mode);
}

/** processing -> failed; false when the row is no longer processing. */
export function markTranscriptionFailed(
  db: Database,
  tenant: Tenant,
  id: string,
  error: Transcription["error"],
  failedAt: string,
  durationSeconds: number | null,
): boolean {
  return (
    db
      .query(
        `UPDATE transcriptions SET status = 'failed', error = ?, failed_at = ?, duration_seconds = COALESCE(?, duration_seconds)
         WHERE id = ? AND project_id = ? AND mode = ? AND status = 'processing'`,
      )
      .run(JSON.stringify(error), failedAt, durationSeconds, id, tenant.projectId, tenant.mode).changes === 1
  );
}

export type TranscriptionFilter = { recordingId?: string; endUserId?: string | null };

export function listTranscriptionRows(db: Database, tenant: Tenant, filter: TranscriptionFilter, page: PageRequest): Page<Transcription> {
  const where = ["project_id = ?", "mode = ?"];
  const params: SQLQueryBindings[] = [tenant.projectId, tenant.mode];
  if (filter.recordingId) {
    where.push("recording_id = ?");
    params.push(filter.recordingId);
  }
  if (filter.endUserId) {
    where.push("end_user_id = ?");
    params.push(filter.endUserId);
  }
  return paginate<TranscriptionRow, Transcription>(db, { table: "transcriptions", where, params }, page, (row) => toStored(row).record);
}

/** Whether the recording has any transcription (auto-transcription starts only the first). */
export function hasTranscription(db: Database, tenant: Tenant, recordingId: string): boolean {
  return !!db
    .query("SELECT 1 FROM transcriptions WHERE recording_id = ? AND project_id = ? AND mode = ? LIMIT 1")
    .get(recordingId, tenant.projectId, tenant.mode);
}

/**
 * Recordings whose newest transcription failed, with that failure's code and their tenant,
 * oldest failure first: what "reprocess all failed" looks at. In one tenant, or in all.
 */
export function listLatestFailures(db: Database, tenant: Tenant | null): { recording_id: string; code: string | null; tenant: Tenant }[] {
  const where = tenant ? " AND t.project_id = ? AND t.mode = ?" : "";
  return db
    .query<{ recording_id: string; project_id: string; mode: Tenant["mode"]; code: string | null }, string[]>(
      `SELECT t.recording_id, t.project_id, t.mode, json_extract(t.error, '$.code') AS code FROM transcriptions t
        WHERE t.status = 'failed'${where}
          AND t.id = (SELECT u.id FROM transcriptions u WHERE u.recording_id = t.recording_id ORDER BY u.created_at DESC, u.id DESC LIMIT 1)
        ORDER BY t.created_at, t.id`,
    )
    .all(...(tenant ? [tenant.projectId, tenant.mode] : []))
    .map((r) => ({ recording_id: r.recording_id, code: r.code, tenant: { projectId: r.project_id, mode: r.mode } }));
}
