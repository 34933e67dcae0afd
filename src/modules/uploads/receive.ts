import { durableTransaction } from "../../db/durable";
import type { Deps } from "../../deps";
import { consumeCredential, findLiveCredential, type Mode, type Tenant } from "../../http/credentials";
import { ApiError } from "../../http/errors";
import { ObjectTooLargeError, type WriteResult } from "../../storage";
import { DELETE_OBJECTS_JOB } from "../recordings/objects";
import { findRecording, updateRecordingRow, upsertChunk } from "../recordings/store";
import type { UploadReceipt } from "./schema";
import { refusal, uploadBudget } from "./service";
import { findUpload, markUploadReceived, type UploadRow, uploadObjectKey } from "./store";

const UNUSABLE_TOKEN = "The upload URL is invalid, expired or already used; ask for a new one with POST /recordings/{id}/upload-url.";
const EMPTY_BODY = "The request body is empty: PUT the file's bytes (the upload URL is still usable).";

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

/** Refusals a Content-Length allows before anything is read or the token is used, so the URL stays usable. */
function checkLength(rule: SizeRule, header: string | null): void {
  if (header === null || !/^\d+$/.test(header)) return;
  const length = Number(header);
  if (length > rule.max) throw new ApiError("payload_too_large", rule.tooLarge);
  if (length === 0) throw new ApiError("invalid_request", EMPTY_BODY);
  if (rule.exact !== null && length < rule.exact) throw new ApiError("invalid_request", `The body has ${length} bytes; this upload URL was issued for ${rule.exact} (file_size_bytes).`);
}

/**
 * The body as chunks, or null when it is empty. The first chunk is read before the token is
 * used, so an empty body (no Content-Length, as with chunked encoding) leaves the URL usable.
 */
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
 * and hashing as it goes, then points the recording at the stored object. The object is
 * complete under its key before any row refers to it.
 */
export async function receiveUpload(deps: Deps, slots: UploadSlots, token: string, request: Request): Promise<UploadReceipt> {
  const { db, clock, storage } = deps;
  const credential = findLiveCredential(db, token, clock.now());
  if (!credential || credential.kind !== "upload" || credential.used_at || !credential.recording_id) throw new ApiError("unauthorized", UNUSABLE_TOKEN);
  const tenant: Tenant = { projectId: credential.project_id, mode: credential.mode as Mode };
  const upload = findUpload(db, tenant, credential.id);
  // The row goes with its recording (ON DELETE CASCADE).
  if (!upload) throw new ApiError("not_found", "The recording of this upload URL was deleted.");
  const rule = sizeRule(deps, tenant, upload);
  checkLength(rule, request.headers.get("content-length"));
  const release = slots.take(credential.project_id);
  try {
    const body = await nonEmptyBody(request);
    if (!body) throw new ApiError("invalid_request", EMPTY_BODY);
    // Taken only now, so a 400, 413 or 429 above leaves the URL usable for a retry.
    if (!consumeCredential(db, credential.id, clock.now())) throw new ApiError("unauthorized", UNUSABLE_TOKEN);
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
    const short = rule.exact !== null && written.size < rule.exact;
    const refused = short ? new ApiError("invalid_request", `${written.size} bytes arrived; this upload URL was issued for ${rule.exact} (file_size_bytes).`) : recordReceipt(deps, tenant, upload, key, written);
    if (refused) {
      await storage.remove(key);
      throw refused;
    }
    return { recording_id: before.id, chunk_index: upload.chunk_index, file_size_bytes: written.size };
  } finally {
    release();
  }
}

/** Points the recording at the stored object in one transaction, or says why it no longer may. */
function recordReceipt(deps: Deps, tenant: Tenant, upload: UploadRow, key: string, written: WriteResult): ApiError | null {
  const { db, clock, queue } = deps;
  const now = clock.now();
  // Durable: the device treats a 200 PUT as delivered.
  return durableTransaction(db, (): ApiError | null => {
    // The recording may have been deleted, completed or repaired while the bytes streamed in.
    const r = findRecording(db, tenant, upload.recording_id);
    const stopped = new ApiError("resource_conflict", "The recording stopped taking uploads while this one was in progress.");
    if (!r || refusal(r)) return stopped;
    // A whole-file PUT and a chunk PUT raced (each URL was valid when issued): the first to land decides.
    if (upload.chunk_index === null ? r.is_streaming : !r.is_streaming && r.storage_key) return stopped;
    // Chunk PUTs that streamed at the same time were each checked against the others as they stood before.
    if (upload.chunk_index !== null) {
      const budget = uploadBudget(deps, tenant, r.id, upload.chunk_index);
      if (written.size > budget.bytes) return new ApiError("payload_too_large", budget.why);
    }
    markUploadReceived(db, tenant, upload.credential_id, key, written.size, now);
    let replaced: string | null;
    if (upload.chunk_index === null) {
      replaced = r.storage_key;
      updateRecordingRow(db, tenant, r.id, { storage_key: key, staged_size: written.size, mime_type: r.mime_type ?? upload.content_type }, now);
    } else {
      replaced = upsertChunk(db, tenant, r.id, { chunk_index: upload.chunk_index, storage_key: key, size_bytes: written.size }, now);
    }
    if (replaced) queue.enqueue(DELETE_OBJECTS_JOB, { keys: [replaced] });
    return null;
  });
}
