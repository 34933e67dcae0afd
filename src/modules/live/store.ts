import type { Database } from "bun:sqlite";
import type { Tenant } from "../../tenancy";

/** How far a live transcription has got (migrations 0031, 0032, 0037). */
export type LiveProgress = {
  transcription_id: string;
  recording_id: string;
  chunks_used: number;
  used_digests: string[];
  used_sizes: number[];
  /** The storage key each used chunk was read from (its digest and size hold while it is the chunk's key). */
  used_keys: string[];
  committed_seconds: number;
  language: string | null;
  /** Per provisional speaker (SPEAKER_1 first), the voiceprints of its latest regions. */
  speaker_prints: number[][][];
  waiting: string | null;
};

/** A provisional segment; `seq` is its Server-Sent Events id. */
export type LiveSegment = { seq: number; start: number; end: number; text: string; confidence: number | null; speaker: string | null };

type ProgressRow = Omit<LiveProgress, "used_digests" | "used_sizes" | "used_keys" | "speaker_prints"> & {
  used_digests: string;
  used_sizes: string;
  used_keys: string;
  speaker_prints: string;
};

const toProgress = (r: ProgressRow): LiveProgress => ({
  ...r,
  used_digests: JSON.parse(r.used_digests),
  used_sizes: JSON.parse(r.used_sizes),
  used_keys: JSON.parse(r.used_keys),
  speaker_prints: JSON.parse(r.speaker_prints),
});

const COLUMNS = "transcription_id, recording_id, chunks_used, used_digests, used_sizes, used_keys, committed_seconds, language, speaker_prints, waiting";

export function insertProgress(db: Database, tenant: Tenant, transcriptionId: string, recordingId: string, now: Date): void {
  db.query("INSERT INTO live_progress (transcription_id, recording_id, project_id, mode, updated_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING").run(
    transcriptionId,
    recordingId,
    tenant.projectId,
    tenant.mode,
    now.toISOString(),
  );
}

/** The live progress of a recording's transcription, if one is live. */
export function progressOfRecording(db: Database, tenant: Tenant, recordingId: string): LiveProgress | null {
  const row = db
    .query<ProgressRow, [string, string, string]>(
      `SELECT ${COLUMNS} FROM live_progress
       WHERE recording_id = ? AND project_id = ? AND mode = ? ORDER BY rowid DESC LIMIT 1`,
    )
    .get(recordingId, tenant.projectId, tenant.mode);
  return row ? toProgress(row) : null;
}

export function progressOf(db: Database, tenant: Tenant, transcriptionId: string): LiveProgress | null {
  const row = db
    .query<ProgressRow, [string, string, string]>(
      `SELECT ${COLUMNS} FROM live_progress
       WHERE transcription_id = ? AND project_id = ? AND mode = ?`,
    )
    .get(transcriptionId, tenant.projectId, tenant.mode);
  return row ? toProgress(row) : null;
}

/**
 * Moves progress on from `from` (compare-and-set: a second worker that did the same work
 * finds the row changed and writes nothing) and appends the segments with the next seqs.
 * Call inside a transaction. Returns whether it applied.
 */
export function advanceProgress(
  db: Database,
  from: LiveProgress,
  to: Pick<LiveProgress, "chunks_used" | "used_digests" | "used_sizes" | "used_keys" | "committed_seconds" | "language" | "speaker_prints">,
  segments: Omit<LiveSegment, "seq">[],
  now: Date,
): boolean {
  const at = now.toISOString();
  const changed = db
    .query(
      `UPDATE live_progress SET chunks_used = ?, used_digests = ?, used_sizes = ?, used_keys = ?, committed_seconds = ?, language = ?, speaker_prints = ?, updated_at = ?
       WHERE transcription_id = ? AND chunks_used = ? AND committed_seconds = ? AND waiting IS NULL`,
    )
    .run(
      to.chunks_used,
      JSON.stringify(to.used_digests),
      JSON.stringify(to.used_sizes),
      JSON.stringify(to.used_keys),
      to.committed_seconds,
      to.language,
      JSON.stringify(to.speaker_prints),
      at,
      from.transcription_id,
      from.chunks_used,
      from.committed_seconds,
    ).changes;
  if (!changed) return false;
  const insert = db.query(
    `INSERT INTO live_segments (transcription_id, seq, start, "end", text, confidence, speaker, created_at)
     VALUES (?1, (SELECT COALESCE(MAX(seq), 0) + 1 FROM live_segments WHERE transcription_id = ?1), ?, ?, ?, ?, ?, ?)`,
  );
  for (const s of segments) insert.run(from.transcription_id, s.start, s.end, s.text, s.confidence, s.speaker, at);
  return true;
}

/** Live work stops here: the audio waits for completion, and `why` says so. */
export function markWaiting(db: Database, transcriptionId: string, why: string, now: Date): void {
  db.query("UPDATE live_progress SET waiting = ?, updated_at = ? WHERE transcription_id = ? AND waiting IS NULL").run(why, now.toISOString(), transcriptionId);
}

/** The provisional segments after `afterSeq`, in order. */
export function segmentsAfter(db: Database, transcriptionId: string, afterSeq: number): LiveSegment[] {
  return db
    .query<LiveSegment, [string, number]>(
      `SELECT seq, start, "end", text, confidence, speaker FROM live_segments WHERE transcription_id = ? AND seq > ? ORDER BY seq`,
    )
    .all(transcriptionId, afterSeq);
}

/** A verification that failed: the provisional transcript is discarded. */
export function discardSegments(db: Database, transcriptionId: string): void {
  db.query("DELETE FROM live_segments WHERE transcription_id = ?").run(transcriptionId);
}
