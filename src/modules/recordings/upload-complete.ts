import { durableTransaction } from "../../db/durable";
import type { Deps } from "../../deps";
import type { Principal } from "../../http/auth";
import type { Tenant } from "../../tenancy";
import { ApiError } from "../../http/errors";
import { isOutOfSpace } from "../../storage/volumes";
import { PRE_UPLOAD, type Recording, type UploadCompleteBody } from "./schema";
import { loadRecording } from "./service";
import { listChunks } from "./chunks-store";
import { acceptCompletion, type Completion, type StoredRecording, toRecording } from "./store";
import { assertChunksWithinLimit } from "./upload-rules";
import { enqueueVerification, verifyUpload } from "./upload-verify";

/**
 * Step 3 of the upload flow, POST /recordings/{id}/upload-complete (spec 4.3). The first call records the completion
 * and enqueues verification in one transaction; with a sha256 it answers 425 until the
 * durable job has verified the whole file, without one it verifies before answering.
 */
export async function completeUpload(deps: Deps, principal: Principal, id: string, body: UploadCompleteBody, now: Date): Promise<Recording> {
  const { db, queue } = deps;
  const retry = toCompletion(body);
  // Durable: a device deletes its copy once upload-complete succeeds.
  const started = durableTransaction(db, () => {
    const r = loadRecording(db, principal, id);
    if (r.status === "integrity_failure") {
      throw new ApiError("upload_integrity_failed", r.error?.message ?? "The uploaded file failed verification; upload it again with a fresh upload URL.");
    }
    if (r.completion) {
      const field = conflicts(r.completion, retry);
      if (field) throw new ApiError("resource_conflict", `This upload was completed with a different ${field}.`, { param: field });
      const pending = r.verification === "pending";
      // The job may have died after its last attempt (ffmpeg or storage down for a while): each retry revives it.
      if (pending) enqueueVerification(queue, principal, id);
      return { pending, hashed: r.completion.sha256 !== null };
    }
    if (!PRE_UPLOAD.includes(r.status)) throw new ApiError("resource_conflict", `Recording ${id} is already uploaded.`);
    if (!hasStagedBytes(deps, principal, r)) {
      throw new ApiError("encrypted_upload_v2_staging_missing", `No uploaded bytes are staged for recording ${id}: PUT the file to an upload URL first.`);
    }
    if (r.is_streaming) checkChunks(deps, principal, r);
    acceptCompletion(db, principal, id, retry, now);
    enqueueVerification(queue, principal, id);
    return { pending: true, hashed: retry.sha256 !== null };
  });
  if (started.pending) {
    if (started.hashed) throw verificationPending();
    // No hash to wait for: verify now (the queued job then finds nothing to do) and answer with the outcome.
    try {
      await verifyUpload(deps, principal, id);
    } catch (err) {
      // A full disk is said as such (507); another passing fault (ffmpeg, storage) is retryable, never a 500: the queued job keeps trying and the client retries.
      if (isOutOfSpace(err)) throw err;
      deps.log.warn("upload verification failed; the job will retry", { recording_id: id, error: err instanceof Error ? err.message : String(err) });
      throw verificationPending();
    }
    return completeUpload(deps, principal, id, body, now);
  }
  return toRecording(loadRecording(db, principal, id));
}

/** 425 while verification runs: retryable, so an Idempotency-Key never keeps it (decision 004). */
const verificationPending = () =>
  new ApiError("upload_verification_pending", "Whole-file verification is running; retry this request shortly.", { headers: { "retry-after": "1" } });

function toCompletion(body: UploadCompleteBody): Completion {
  return {
    sha256: body.sha256 ?? null,
    file_size_bytes: body.file_size_bytes ?? null,
    upload_attempt_id: body.upload_attempt_id ?? null,
    client_version: body.client_version ?? null,
  };
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

/** A streaming upload completes only with every chunk 0..n-1 present and within the size limit as a whole. */
function checkChunks(deps: Deps, tenant: Tenant, r: StoredRecording): void {
  const have = new Set(listChunks(deps.db, tenant, r.id).map((c) => c.chunk_index));
  // chunk_count remembers chunks whose objects were lost since; the highest index also covers rows counted before it only grew.
  const expected = Math.max(r.chunk_count, ...[...have].map((i) => i + 1));
  const missing = Array.from({ length: expected }, (_, i) => i).find((i) => !have.has(i));
  if (missing !== undefined) throw new ApiError("resource_conflict", `Chunk ${missing} of recording ${r.id} was never uploaded.`, { param: "chunk_index" });
  // Chunk PUTs keep the sum within the limit; this catches PUTs that raced and a limit lowered since.
  assertChunksWithinLimit(deps, tenant, r);
}
