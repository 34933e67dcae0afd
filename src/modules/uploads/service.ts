import type { Deps } from "../../deps";
import type { Principal } from "../../http/auth";
import { consumeCredential, findLiveCredential, issueCredential, type Mode, type Tenant } from "../../http/credentials";
import { ApiError } from "../../http/errors";
import { chunksOf, ObjectTooLargeError } from "../../storage";
import { DELETE_OBJECTS_JOB } from "../recordings/objects";
import { PRE_UPLOAD } from "../recordings/schema";
import { loadRecording } from "../recordings/service";
import { findRecording, type StoredRecording, updateRecordingRow, upsertChunk } from "../recordings/store";
import type { UploadReceipt, UploadUrl, UploadUrlBody } from "./schema";
import { findUpload, insertUpload, markUploadReceived, uploadObjectKey } from "./store";

/** Why a recording takes no bytes now, or null when it does. */
function refusal(r: StoredRecording): string | null {
  if (r.verification === "pending") return `Recording ${r.id} is being verified; wait for upload-complete to answer.`;
  if (!PRE_UPLOAD.includes(r.status)) return `Recording ${r.id} is already uploaded (status ${r.status}).`;
  return null;
}

/**
 * POST /recordings/{id}/upload-url: a short-lived, single-use up_ token in a URL on this
 * server. On a recording in integrity_failure it is also the repair (spec 3.3): the failed
 * completion is cleared and the recording takes a fresh upload.
 */
export function issueUploadUrl(deps: Deps, principal: Principal, id: string, body: UploadUrlBody, now: Date): UploadUrl {
  const { db, config } = deps;
  if (body.file_size_bytes !== undefined && body.file_size_bytes > config.uploads.maxBytes) {
    throw new ApiError("payload_too_large", `Uploads are limited to ${config.uploads.maxBytes} bytes.`, { param: "file_size_bytes" });
  }
  const expiresAt = new Date(now.getTime() + config.uploads.tokenTtlSeconds * 1000);
  const token = db.transaction(() => {
    const r = loadRecording(db, principal, id);
    if (r.status === "integrity_failure") {
      updateRecordingRow(db, principal, id, { status: r.is_streaming ? "streaming" : "pending", completion: null, error: null }, now);
    } else {
      const why = refusal(r);
      if (why) throw new ApiError("resource_conflict", why);
    }
    const chunkIndex = body.chunk_index ?? null;
    if (chunkIndex === null && r.is_streaming) {
      throw new ApiError("resource_conflict", `Recording ${id} is a streaming upload: ask for a URL per chunk with chunk_index.`, { param: "chunk_index" });
    }
    if (chunkIndex !== null && !r.is_streaming && r.storage_key) {
      throw new ApiError("resource_conflict", `Recording ${id} already has a whole-file upload; chunks cannot be added to it.`, { param: "chunk_index" });
    }
    const issued = issueCredential(db, { kind: "upload", projectId: principal.projectId, mode: principal.mode, recordingId: id, expiresAt, now });
    insertUpload(db, principal, { credentialId: issued.id, recordingId: id, chunkIndex, contentType: body.content_type ?? null, declaredSize: body.file_size_bytes ?? null }, now);
    return issued.token;
  })();
  return {
    upload_url: `${config.publicUrl}/v1/uploads/${token}`,
    method: "PUT",
    headers: { "Content-Type": body.content_type ?? "application/octet-stream" },
    expires_at: expiresAt.toISOString(),
  };
}

const UNUSABLE_TOKEN = "The upload URL is invalid, expired or already used; ask for a new one with POST /recordings/{id}/upload-url.";

/**
 * Per-project count of PUTs in progress (spec 8: 10 concurrent uploads). In memory: one
 * process serves the API, and a crash ends every upload it was counting anyway.
 */
export class UploadSlots {
  private inUse = new Map<string, number>();
  constructor(private limit: number) {}
  take(projectId: string): () => void {
    const n = this.inUse.get(projectId) ?? 0;
    if (n >= this.limit) {
      throw new ApiError("too_many_uploads", `At most ${this.limit} uploads may run at once per project; retry when one finishes.`, { headers: { "retry-after": "1" } });
    }
    this.inUse.set(projectId, n + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.inUse.get(projectId) ?? 1) - 1;
      if (left) this.inUse.set(projectId, left);
      else this.inUse.delete(projectId);
    };
  }
}

/**
 * PUT /v1/uploads/{token}: streams the body to storage (never whole in memory), counting
 * and hashing as it goes, then points the recording at the stored object. The object is
 * complete under its key before any row refers to it.
 */
export async function receiveUpload(deps: Deps, slots: UploadSlots, token: string, request: Request): Promise<UploadReceipt> {
  const { db, clock, config, storage, queue } = deps;
  const credential = findLiveCredential(db, token, clock.now());
  if (!credential || credential.kind !== "upload" || credential.used_at || !credential.recording_id) throw new ApiError("unauthorized", UNUSABLE_TOKEN);
  const declared = Number(request.headers.get("content-length") ?? NaN);
  if (declared > config.uploads.maxBytes) throw new ApiError("payload_too_large", `Uploads are limited to ${config.uploads.maxBytes} bytes.`);
  const release = slots.take(credential.project_id);
  try {
    // Taken only now, so a 413 or 429 above leaves the URL usable for a retry.
    if (!consumeCredential(db, credential.id, clock.now())) throw new ApiError("unauthorized", UNUSABLE_TOKEN);
    const tenant: Tenant = { projectId: credential.project_id, mode: credential.mode as Mode };
    const upload = findUpload(db, tenant, credential.id);
    const before = findRecording(db, tenant, credential.recording_id);
    if (!before || !upload) throw new ApiError("not_found", "The recording of this upload URL was deleted.");
    const why = refusal(before);
    if (why) throw new ApiError("resource_conflict", why);
    const key = uploadObjectKey(upload);
    let written;
    try {
      written = await storage.write(key, chunksOf(request.body ?? new Blob([]).stream()), { maxBytes: config.uploads.maxBytes });
    } catch (err) {
      if (err instanceof ObjectTooLargeError) throw new ApiError("payload_too_large", `Uploads are limited to ${config.uploads.maxBytes} bytes.`);
      throw err;
    }
    const now = clock.now();
    const accepted = db.transaction(() => {
      // The recording may have been deleted, completed or repaired while the bytes streamed in.
      const r = findRecording(db, tenant, before.id);
      if (!r || refusal(r)) return false;
      // A whole-file PUT and a chunk PUT raced (each URL was valid when issued): the first to land decides.
      if (upload.chunk_index === null ? r.is_streaming : !r.is_streaming && r.storage_key) return false;
      markUploadReceived(db, tenant, credential.id, key, written.size, now);
      let replaced: string | null;
      if (upload.chunk_index === null) {
        replaced = r.storage_key;
        updateRecordingRow(db, tenant, r.id, { storage_key: key, staged_size: written.size, staged_sha256: written.sha256, mime_type: r.mime_type ?? upload.content_type }, now);
      } else {
        replaced = upsertChunk(db, tenant, r.id, { chunk_index: upload.chunk_index, storage_key: key, size_bytes: written.size, sha256: written.sha256 }, now);
      }
      if (replaced) queue.enqueue(DELETE_OBJECTS_JOB, { keys: [replaced] });
      return true;
    })();
    if (!accepted) {
      await storage.remove(key);
      throw new ApiError("resource_conflict", "The recording stopped taking uploads while this one was in progress.");
    }
    return { recording_id: before.id, chunk_index: upload.chunk_index, file_size_bytes: written.size, sha256: written.sha256 };
  } finally {
    release();
  }
}
