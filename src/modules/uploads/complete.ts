import { createHash } from "node:crypto";
import type { Deps } from "../../deps";
import { UndecodableAudioError } from "../../engines/audio";
import { recordEvent } from "../../events/outbox";
import type { Principal } from "../../http/auth";
import type { Tenant } from "../../http/credentials";
import { ApiError } from "../../http/errors";
import { chunksOf } from "../../storage";
import { DELETE_OBJECTS_JOB, recordingPrefix } from "../recordings/objects";
import { PRE_UPLOAD } from "../recordings/schema";
import { loadRecording } from "../recordings/service";
import { type Completion, deleteChunkRows, findRecording, listChunks, type StoredRecording, toRecording, updateRecordingRow } from "../recordings/store";
import type { Recording } from "../recordings/schema";
import type { UploadCompleteBody } from "./schema";

export const VERIFY_UPLOAD_JOB = "recordings.verify_upload";
export type VerifyPayload = { project_id: string; mode: Tenant["mode"]; recording_id: string };

/** Thrown (not an ApiError, so idempotent() keeps no response) while verification runs: answered 425. */
export class VerificationPending extends Error {}

function toCompletion(body: UploadCompleteBody): Completion {
  return { sha256: body.sha256 ?? null, file_size_bytes: body.file_size_bytes ?? null, upload_attempt_id: body.upload_attempt_id ?? null, client_version: body.client_version ?? null };
}

/** A retry conflicts when it states a hash, size or attempt id other than the accepted one. client_version is diagnostics only. */
function conflicts(accepted: Completion, retry: Completion): string | null {
  for (const field of ["sha256", "file_size_bytes", "upload_attempt_id"] as const) {
    if (retry[field] !== null && retry[field] !== accepted[field]) return field;
  }
  return null;
}

function hasStagedBytes(deps: Deps, tenant: Tenant, r: StoredRecording): boolean {
  return r.is_streaming ? listChunks(deps.db, tenant, r.id).length > 0 : r.storage_key !== null;
}

/**
 * POST /recordings/{id}/upload-complete (spec 4.3). The first call records the completion
 * and enqueues verification in one transaction; with a sha256 it answers 425 until the
 * durable job has verified the whole file, without one it verifies before answering.
 */
export async function completeUpload(deps: Deps, principal: Principal, id: string, body: UploadCompleteBody, now: Date): Promise<Recording> {
  const { db, queue } = deps;
  const retry = toCompletion(body);
  const started = db.transaction(() => {
    const r = loadRecording(db, principal, id);
    if (r.status === "integrity_failure") {
      throw new ApiError("upload_integrity_failed", r.error?.message ?? "The uploaded file failed verification; upload it again with a fresh upload URL.");
    }
    if (r.completion) {
      const field = conflicts(r.completion, retry);
      if (field) throw new ApiError("resource_conflict", `This upload was completed with a different ${field}.`, { param: field });
      return { pending: r.verification === "pending", hashed: r.completion.sha256 !== null };
    }
    if (!PRE_UPLOAD.includes(r.status)) throw new ApiError("resource_conflict", `Recording ${id} is already uploaded.`);
    if (!hasStagedBytes(deps, principal, r)) {
      throw new ApiError("encrypted_upload_v2_staging_missing", `No uploaded bytes are staged for recording ${id}: PUT the file to an upload URL first.`);
    }
    if (r.is_streaming) {
      const have = new Set(listChunks(db, principal, id).map((c) => c.chunk_index));
      // chunk_count remembers chunks whose objects were lost since; the highest index shows trailing gaps.
      const expected = Math.max(r.chunk_count, ...[...have].map((i) => i + 1));
      const missing = Array.from({ length: expected }, (_, i) => i).find((i) => !have.has(i)) ?? -1;
      if (missing !== -1) throw new ApiError("resource_conflict", `Chunk ${missing} of recording ${id} was never uploaded.`, { param: "chunk_index" });
    }
    updateRecordingRow(db, principal, id, { completion: JSON.stringify(retry), verification: "pending" }, now);
    queue.enqueue(VERIFY_UPLOAD_JOB, { project_id: principal.projectId, mode: principal.mode, recording_id: id } satisfies VerifyPayload, { dedupeKey: `verify:${id}` });
    return { pending: true, hashed: retry.sha256 !== null };
  })();
  if (started.pending) {
    if (started.hashed) throw new VerificationPending();
    // No hash to wait for: verify now (the queued job then finds nothing to do) and answer with the outcome.
    await verifyUpload(deps, principal, id);
    return completeUpload(deps, principal, id, body, now);
  }
  return toRecording(loadRecording(db, principal, id));
}

async function sha256Of(deps: Deps, key: string): Promise<{ size: number; sha256: string }> {
  const hash = createHash("sha256");
  let size = 0;
  for await (const chunk of chunksOf(deps.storage.read(key))) {
    hash.update(chunk);
    size += chunk.byteLength;
  }
  return { size, sha256: hash.digest("hex") };
}

/**
 * Stitches a streaming upload's chunks, in order, into one object (deterministic key, so a
 * rerun overwrites it); or names the chunk objects that are gone.
 */
async function assemble(deps: Deps, tenant: Tenant, r: StoredRecording): Promise<{ key: string } | { lost: string[] }> {
  const key = `${recordingPrefix(tenant, r.id)}assembled`;
  const chunks = listChunks(deps.db, tenant, r.id);
  const lost: string[] = [];
  for (const c of chunks) if ((await deps.storage.size(c.storage_key)) === null) lost.push(c.storage_key);
  if (lost.length) return { lost };
  async function* all() {
    for (const c of chunks) yield* chunksOf(deps.storage.read(c.storage_key));
  }
  await deps.storage.write(key, all());
  return { key };
}

/**
 * The verification job: whole-file hash and size of what storage holds (not of what the
 * PUT measured), then an ffmpeg probe; the outcome is one transaction. Idempotent: a
 * recording no longer awaiting verification is left alone.
 */
export async function verifyUpload(deps: Deps, tenant: Tenant, id: string): Promise<void> {
  const { db, storage, clock, queue } = deps;
  const r = findRecording(db, tenant, id);
  if (!r || r.verification !== "pending" || !r.completion) return;
  const assembled = r.is_streaming ? await assemble(deps, tenant, r) : null;
  const stagedKey = assembled ? ("key" in assembled ? assembled.key : null) : r.storage_key;
  const lostChunks = assembled && "lost" in assembled ? assembled.lost : [];
  const present = stagedKey !== null && (await storage.size(stagedKey)) !== null;
  const actual = present ? await sha256Of(deps, stagedKey) : null;
  const wanted = r.completion;
  let problem: string | null = null;
  if (actual && wanted.sha256 && wanted.sha256 !== actual.sha256) problem = `sha256 is ${actual.sha256}, not the ${wanted.sha256} the client sent`;
  else if (actual && wanted.file_size_bytes !== null && wanted.file_size_bytes !== actual.size) problem = `${actual.size} bytes arrived, not the ${wanted.file_size_bytes} the client sent`;
  let probe = null;
  let audioError: { code: string; message: string } | null = null;
  if (stagedKey && actual && !problem) {
    try {
      probe = await storage.withLocalFile(stagedKey, (path) => deps.engines.audio.probe(path));
    } catch (err) {
      // Any other failure (ffmpeg missing, storage down) is thrown: the job retries.
      if (!(err instanceof UndecodableAudioError)) throw err;
      audioError = { code: "audio_format_unsupported", message: err.message };
    }
  }
  const now = clock.now();
  const gone = db.transaction(() => {
    const current = findRecording(db, tenant, id);
    if (!current) return true;
    if (current.verification !== "pending") return false;
    if (!actual) {
      // The staged object is confirmed absent: the completion is dropped and a retry answers staging_missing
      // (or, for chunks, names the first chunk to upload again).
      updateRecordingRow(db, tenant, id, { verification: null, completion: null, storage_key: current.is_streaming ? current.storage_key : null }, now);
      if (lostChunks.length) deleteChunkRows(db, tenant, id, lostChunks);
      return false;
    }
    if (problem) {
      const error = { code: "upload_integrity_failed", message: `The uploaded file failed verification: ${problem}.` };
      updateRecordingRow(db, tenant, id, { status: "integrity_failure", verification: null, error: JSON.stringify(error) }, now);
      return false;
    }
    const at = now.toISOString();
    updateRecordingRow(
      db,
      tenant,
      id,
      {
        status: "uploaded",
        verification: null,
        storage_key: stagedKey,
        file_size_bytes: actual.size,
        sha256: actual.sha256,
        duration_seconds: probe?.durationSeconds ?? null,
        format: probe?.format ?? null,
        codec: probe?.codec ?? null,
        error: audioError ? JSON.stringify(audioError) : null,
        uploaded_at: at,
      },
      now,
    );
    if (current.is_streaming) {
      queue.enqueue(DELETE_OBJECTS_JOB, { keys: listChunks(db, tenant, id).map((c) => c.storage_key) });
      deleteChunkRows(db, tenant, id);
    }
    const endedAt = current.recorded_at && probe ? new Date(Date.parse(current.recorded_at) + probe.durationSeconds * 1000).toISOString() : null;
    recordEvent(
      db,
      tenant,
      "recording.uploaded",
      {
        id,
        end_user_id: current.end_user_id,
        device_id: current.device_id,
        status: "uploaded",
        duration_seconds: probe?.durationSeconds ?? null,
        file_size_bytes: actual.size,
        format: probe?.format ?? null,
        started_at: current.recorded_at,
        ended_at: endedAt,
        uploaded_at: at,
      },
      now,
    );
    queue.enqueue("transcriptions.auto", { project_id: tenant.projectId, mode: tenant.mode, recording_id: id }, { dedupeKey: `transcriptions.auto:${id}` });
    return false;
  })();
  // Deleted while the chunks were being stitched: the deletion job may have run before the object existed.
  if (gone && r.is_streaming && stagedKey) await storage.remove(stagedKey);
}

export function registerUploadVerification(deps: Deps): void {
  deps.queue.register<VerifyPayload>(VERIFY_UPLOAD_JOB, ({ payload }) => verifyUpload(deps, { projectId: payload.project_id, mode: payload.mode }, payload.recording_id));
}
