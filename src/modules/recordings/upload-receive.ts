import { durableTransaction } from "../../db/durable";
import type { Deps } from "../../deps";
import { consumeCredential } from "../../http/credentials";
import type { Mode, Tenant } from "../../tenancy";
import { ApiError } from "../../http/errors";
import { ObjectTooLargeError, type WriteResult } from "../../storage";
import { DELETE_OBJECTS_JOB } from "./objects";
import { isAudioMimeType, type UploadReceipt } from "./schema";
import { upsertChunk } from "./chunks-store";
import { findRecording, stageWholeFile } from "./store";
import { findUpload, markUploadReceived, type UploadRow, uploadObjectKey } from "./upload-store";
import { assertRoomForUpload, assertWithinBudget, putSizeRule, refusal, type SizeRule } from "./upload-rules";
import { nonEmptyBody, type UploadSlots } from "./upload-body";

const UNUSABLE_TOKEN = "The upload URL is invalid, expired or already used; ask for a new one with POST /recordings/{id}/upload-url.";
const RECORDING_GONE = "The recording of this upload URL was deleted.";
const EMPTY_BODY = "The request body is empty: PUT the file's bytes (the upload URL is still usable).";

/**
 * Step 2 of the upload flow, PUT /v1/uploads/{token}: streams the body to storage (never whole in memory), counting
 * as it goes, then points the recording at the stored object and spends the URL in one
 * durable transaction. A 2xx therefore means the bytes are on disk (fsynced) and recorded;
 * any failure before that (empty, short or oversized body, a full disk, a dropped
 * connection) leaves the URL usable for a retry.
 */
export async function receiveUpload(deps: Deps, slots: UploadSlots, token: string, request: Request): Promise<UploadReceipt> {
  const { db, storage } = deps;
  const { tenant, upload } = loadUpload(deps, token);
  const rule = putSizeRule(deps, tenant, upload);
  const length = checkLength(rule, request.headers.get("content-length"));
  assertRoomForUpload(deps, length ?? upload.declared_size ?? 0);
  // The recording's device, if any, has its own share of the slots; a device token's recordings are always its device's.
  const deviceId = findRecording(db, tenant, upload.recording_id)?.device_id ?? null;
  const release = slots.take(tenant.projectId, deviceId, upload.credential_id);
  let stopTiming = () => {};
  try {
    const { chunks: body, stop } = await nonEmptyBody(request, {
      minBytesPerSecond: deps.config.uploads.minBytesPerSecond,
      windowMs: deps.config.uploads.rateWindowMs,
    });
    stopTiming = stop;
    if (!body) throw new ApiError("invalid_request", EMPTY_BODY);
    const before = findRecording(db, tenant, upload.recording_id);
    if (!before) throw new ApiError("not_found", RECORDING_GONE);
    const why = refusal(before);
    if (why) throw new ApiError("resource_conflict", why);
    const key = uploadObjectKey(upload);
    let written;
    try {
      written = await storage.write(key, body, { maxBytes: rule.max });
    } catch (err) {
      if (err instanceof ObjectTooLargeError) throw new ApiError("payload_too_large", rule.tooLarge);
      throw err;
    }
    try {
      if (rule.exact !== null && written.size < rule.exact) {
        throw new ApiError(
          "invalid_request",
          `${written.size} bytes arrived; this upload URL was issued for ${rule.exact} (file_size_bytes). The URL is still usable: PUT the whole file again.`,
        );
      }
      recordReceipt(deps, tenant, upload, key, written);
    } catch (err) {
      // Should the removal fail too, the expired URL's sweep finds the object (it was never recorded).
      await storage.remove(key).catch(() => {});
      throw err;
    }
    return { recording_id: before.id, chunk_index: upload.chunk_index, file_size_bytes: written.size };
  } finally {
    stopTiming();
    release();
  }
}

/** The upload URL a token names, and its tenant: 401 for a token that cannot upload, 404 once its recording is gone. */
function loadUpload(deps: Deps, token: string): { tenant: Tenant; upload: UploadRow } {
  const credential = deps.credentials.find(token, deps.clock.now());
  if (!credential || credential.kind !== "upload" || credential.used_at || !credential.recording_id) throw new ApiError("unauthorized", UNUSABLE_TOKEN);
  const tenant: Tenant = { projectId: credential.project_id, mode: credential.mode as Mode };
  const upload = findUpload(deps.db, tenant, credential.id);
  // The row goes with its recording (ON DELETE CASCADE).
  if (!upload) throw new ApiError("not_found", RECORDING_GONE);
  return { tenant, upload };
}

/** Refusals a Content-Length allows before anything is read; returns the length when the header gives one. */
function checkLength(rule: SizeRule, header: string | null): number | null {
  if (header === null || !/^\d+$/.test(header)) return null;
  const length = Number(header);
  if (length > rule.max) throw new ApiError("payload_too_large", rule.tooLarge);
  if (length === 0) throw new ApiError("invalid_request", EMPTY_BODY);
  if (rule.exact !== null && length < rule.exact)
    throw new ApiError("invalid_request", `The body has ${length} bytes; this upload URL was issued for ${rule.exact} (file_size_bytes).`);
  return length;
}

/** The PUT's declared type as a recording's mime_type, when it is one a recording may carry (decision 113). */
const audioTypeOf = (contentType: string | null): string | null => (contentType !== null && isAudioMimeType(contentType) ? contentType : null);

/** Spends the URL and points the recording at the stored object, in one durable transaction, or throws why it no longer may. */
function recordReceipt(deps: Deps, tenant: Tenant, upload: UploadRow, key: string, written: WriteResult): void {
  const { db, clock, queue } = deps;
  const now = clock.now();
  // Durable: the device treats a 2xx PUT as delivered and may delete its copy.
  durableTransaction(db, () => {
    // Expiry is not checked again: the URL was live when the PUT began, and the bytes are here.
    if (!consumeCredential(deps, upload.credential_id, now)) throw new ApiError("unauthorized", UNUSABLE_TOKEN);
    // The recording may have been deleted, completed or repaired while the bytes streamed in.
    const r = findRecording(db, tenant, upload.recording_id);
    const stopped = new ApiError("resource_conflict", "The recording stopped taking uploads while this one was in progress.");
    if (!r || refusal(r)) throw stopped;
    // A whole-file PUT and a chunk PUT raced (each URL was valid when issued): the first to land decides.
    if (upload.chunk_index === null ? r.is_streaming : !r.is_streaming && r.storage_key) throw stopped;
    // Chunk PUTs that streamed at the same time were each checked against the others as they stood before.
    if (upload.chunk_index !== null) assertWithinBudget(deps, tenant, r.id, upload.chunk_index, written.size);
    markUploadReceived(db, tenant, upload.credential_id, key, written.size, now);
    let replaced: string | null;
    if (upload.chunk_index === null) {
      replaced = r.storage_key;
      stageWholeFile(db, tenant, r.id, { storageKey: key, size: written.size, mimeType: r.mime_type ?? audioTypeOf(upload.content_type) }, now);
    } else {
      replaced = upsertChunk(db, tenant, r.id, { chunk_index: upload.chunk_index, storage_key: key, size_bytes: written.size }, now);
      // Live transcription (issue 30) takes it from here, by contract.
      const chunk = { project_id: tenant.projectId, mode: tenant.mode, recording_id: r.id, chunk_index: upload.chunk_index };
      queue.enqueue("live.chunk_received", chunk, { dedupeKey: `live.chunk_received:${r.id}:${upload.chunk_index}` });
    }
    if (replaced) queue.enqueue(DELETE_OBJECTS_JOB, { keys: [replaced] });
  });
}
