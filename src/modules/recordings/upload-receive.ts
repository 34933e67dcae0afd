import { durableTransaction } from "../../db/durable";
import type { Deps } from "../../deps";
import { consumeCredential } from "../../http/credentials";
import type { Mode, Tenant } from "../../tenancy";
import { ApiError } from "../../http/errors";
import { ObjectTooLargeError, type WriteResult } from "../../storage";
import { DELETE_OBJECTS_JOB } from "./objects";
import type { UploadReceipt } from "./schema";
import { findRecording, stageWholeFile, upsertChunk } from "./store";
import { findUpload, markUploadReceived, type UploadRow, uploadObjectKey } from "./upload-store";
import { assertRoomForUpload } from "./upload-space";
import { refusal, uploadBudget } from "./upload-url";

const UNUSABLE_TOKEN = "The upload URL is invalid, expired or already used; ask for a new one with POST /recordings/{id}/upload-url.";
const EMPTY_BODY = "The request body is empty: PUT the file's bytes (the upload URL is still usable).";

/**
 * PUTs in progress: at most `limit` per project (spec 8: 10 concurrent uploads), and one
 * per upload URL, since a URL is spent only when its bytes are stored. In memory: one
 * process serves a data dir (it is locked), and a crash ends every upload it was counting.
 * One per Deps (boot.ts).
 */
export class UploadSlots {
  private inUse = new Map<string, number>();
  private urlsInUse = new Set<string>();
  constructor(private limit: number) {}
  take(projectId: string, credentialId: string): () => void {
    if (this.urlsInUse.has(credentialId)) throw new ApiError("resource_conflict", "Another PUT to this upload URL is in progress; wait for its answer.");
    const n = this.inUse.get(projectId) ?? 0;
    if (n >= this.limit) {
      throw new ApiError("too_many_uploads", `At most ${this.limit} uploads may run at once per project; retry when one finishes.`, { headers: { "retry-after": "1" } });
    }
    this.inUse.set(projectId, n + 1);
    this.urlsInUse.add(credentialId);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.urlsInUse.delete(credentialId);
      const left = (this.inUse.get(projectId) ?? 1) - 1;
      if (left) this.inUse.set(projectId, left);
      else this.inUse.delete(projectId);
    };
  }
}

/**
 * What one PUT may carry (decision 034): at most the upload limit less the recording's other
 * chunks, and exactly file_size_bytes when upload-url was told it (as an S3 URL signed with a
 * Content-Length would insist), so a truncated or padded body never becomes the staged file.
 */
type SizeRule = { max: number; exact: number | null; tooLarge: string };

function sizeRule(deps: Deps, tenant: Tenant, upload: UploadRow): SizeRule {
  const budget = uploadBudget(deps, tenant, upload.recording_id, upload.chunk_index);
  const declared = upload.declared_size;
  if (declared !== null && declared <= budget.bytes) return { max: declared, exact: declared, tooLarge: `This upload URL was issued for ${declared} bytes (file_size_bytes).` };
  return { max: budget.bytes, exact: declared, tooLarge: budget.why };
}

/** Refusals a Content-Length allows before anything is read; returns the length when the header gives one. */
function checkLength(rule: SizeRule, header: string | null): number | null {
  if (header === null || !/^\d+$/.test(header)) return null;
  const length = Number(header);
  if (length > rule.max) throw new ApiError("payload_too_large", rule.tooLarge);
  if (length === 0) throw new ApiError("invalid_request", EMPTY_BODY);
  if (rule.exact !== null && length < rule.exact) throw new ApiError("invalid_request", `The body has ${length} bytes; this upload URL was issued for ${rule.exact} (file_size_bytes).`);
  return length;
}

/** The body as chunks, or null when it is empty (no Content-Length says so up front with chunked encoding). */
async function nonEmptyBody(request: Request): Promise<AsyncGenerator<Uint8Array> | null> {
  const reader = request.body?.getReader();
  if (!reader) return null;
  let first = await reader.read();
  while (!first.done && first.value.byteLength === 0) first = await reader.read();
  if (first.done) {
    reader.releaseLock();
    return null;
  }
  const head = first.value;
  return (async function* () {
    try {
      yield head;
      for (let r = await reader.read(); !r.done; r = await reader.read()) yield r.value;
    } finally {
      reader.releaseLock();
    }
  })();
}

/**
 * PUT /v1/uploads/{token}: streams the body to storage (never whole in memory), counting
 * as it goes, then points the recording at the stored object and spends the URL in one
 * durable transaction. A 2xx therefore means the bytes are on disk (fsynced) and recorded;
 * any failure before that (empty, short or oversized body, a full disk, a dropped
 * connection) leaves the URL usable for a retry.
 */
export async function receiveUpload(deps: Deps, slots: UploadSlots, token: string, request: Request): Promise<UploadReceipt> {
  const { db, clock, storage } = deps;
  const credential = deps.credentials.find(token, clock.now());
  if (!credential || credential.kind !== "upload" || credential.used_at || !credential.recording_id) throw new ApiError("unauthorized", UNUSABLE_TOKEN);
  const tenant: Tenant = { projectId: credential.project_id, mode: credential.mode as Mode };
  const upload = findUpload(db, tenant, credential.id);
  // The row goes with its recording (ON DELETE CASCADE).
  if (!upload) throw new ApiError("not_found", "The recording of this upload URL was deleted.");
  const rule = sizeRule(deps, tenant, upload);
  const length = checkLength(rule, request.headers.get("content-length"));
  assertRoomForUpload(deps, length ?? upload.declared_size ?? 0);
  const release = slots.take(credential.project_id, credential.id);
  try {
    const body = await nonEmptyBody(request);
    if (!body) throw new ApiError("invalid_request", EMPTY_BODY);
    const before = findRecording(db, tenant, credential.recording_id);
    if (!before) throw new ApiError("not_found", "The recording of this upload URL was deleted.");
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
        throw new ApiError("invalid_request", `${written.size} bytes arrived; this upload URL was issued for ${rule.exact} (file_size_bytes). The URL is still usable: PUT the whole file again.`);
      }
      recordReceipt(deps, tenant, upload, key, written);
    } catch (err) {
      // Should the removal fail too, the expired URL's sweep finds the object (it was never recorded).
      await storage.remove(key).catch(() => {});
      throw err;
    }
    return { recording_id: before.id, chunk_index: upload.chunk_index, file_size_bytes: written.size };
  } finally {
    release();
  }
}

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
    if (upload.chunk_index !== null) {
      const budget = uploadBudget(deps, tenant, r.id, upload.chunk_index);
      if (written.size > budget.bytes) throw new ApiError("payload_too_large", budget.why);
    }
    markUploadReceived(db, tenant, upload.credential_id, key, written.size, now);
    let replaced: string | null;
    if (upload.chunk_index === null) {
      replaced = r.storage_key;
      stageWholeFile(db, tenant, r.id, { storageKey: key, size: written.size, mimeType: r.mime_type ?? upload.content_type }, now);
    } else {
      replaced = upsertChunk(db, tenant, r.id, { chunk_index: upload.chunk_index, storage_key: key, size_bytes: written.size }, now);
    }
    if (replaced) queue.enqueue(DELETE_OBJECTS_JOB, { keys: [replaced] });
  });
}
