import { durableTransaction } from "../../db/durable";
import type { Deps } from "../../deps";
import { consumeCredential } from "../../http/credentials";
import type { Mode, Tenant } from "../../tenancy";
import { ApiError } from "../../http/errors";
import { ObjectTooLargeError, type WriteResult } from "../../storage";
import { DELETE_OBJECTS_JOB } from "./objects";
import { isAudioMimeType, type UploadReceipt } from "./schema";
import { findRecording, stageWholeFile, upsertChunk } from "./store";
import { findUpload, markUploadReceived, type UploadRow, uploadObjectKey } from "./upload-store";
import { assertRoomForUpload } from "./upload-space";
import { refusal, uploadBudget } from "./upload-url";

const UNUSABLE_TOKEN = "The upload URL is invalid, expired or already used; ask for a new one with POST /recordings/{id}/upload-url.";
const EMPTY_BODY = "The request body is empty: PUT the file's bytes (the upload URL is still usable).";

/**
 * PUTs in progress: at most `limits.project` per project (spec 8: 10 concurrent uploads), at
 * most `limits.device` of them for one device's recordings (so one device, or a stolen device
 * token, cannot take all of a project's slots: decision 115), and one per upload URL, since
 * a URL is spent only when its bytes are stored. In memory: one process serves a data dir
 * (it is locked), and a crash ends every upload it was counting. One per Deps (boot.ts).
 */
export class UploadSlots {
  private inUse = new Map<string, number>();
  private urlsInUse = new Set<string>();
  constructor(private limits: { project: number; device: number }) {}
  take(projectId: string, deviceId: string | null, credentialId: string): () => void {
    if (this.urlsInUse.has(credentialId)) throw new ApiError("resource_conflict", "Another PUT to this upload URL is in progress; wait for its answer.");
    const busy = (what: string, limit: number) =>
      new ApiError("too_many_uploads", `At most ${limit} uploads may run at once per ${what}; retry when one finishes.`, { headers: { "retry-after": "1" } });
    const projectKey = `project:${projectId}`;
    const deviceKey = deviceId === null ? null : `device:${projectId}:${deviceId}`;
    if ((this.inUse.get(projectKey) ?? 0) >= this.limits.project) throw busy("project", this.limits.project);
    if (deviceKey && (this.inUse.get(deviceKey) ?? 0) >= this.limits.device) throw busy("device", this.limits.device);
    const keys = deviceKey ? [projectKey, deviceKey] : [projectKey];
    for (const k of keys) this.inUse.set(k, (this.inUse.get(k) ?? 0) + 1);
    this.urlsInUse.add(credentialId);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.urlsInUse.delete(credentialId);
      for (const k of keys) {
        const left = (this.inUse.get(k) ?? 1) - 1;
        if (left) this.inUse.set(k, left);
        else this.inUse.delete(k);
      }
    };
  }
}

/** The least a PUT's body must bring per window (config.uploads); 0 bytes per second: no floor. */
export type BodyRate = { minBytesPerSecond: number; windowMs: number };

/**
 * Reads a body while timing it: when a window of `rate.windowMs` brings fewer bytes than the
 * floor, the body is cancelled and the next read throws 408 request_timeout, so a trickling
 * client cannot hold an upload slot for the whole idle timeout (decision 115). Windows are
 * counted from the first read, on the wall clock (the network's time, not the app's clock).
 */
function timedReader(reader: ReadableStreamDefaultReader<Uint8Array>, rate: BodyRate) {
  const floor = (rate.minBytesPerSecond * rate.windowMs) / 1000;
  let inWindow = 0;
  let tooSlow = false;
  const timer =
    floor > 0
      ? setInterval(() => {
          if (inWindow < floor) {
            tooSlow = true;
            clearInterval(timer);
            void reader.cancel().catch(() => {});
          }
          inWindow = 0;
        }, rate.windowMs)
      : undefined;
  return {
    async read() {
      const r = await reader.read();
      if (tooSlow) {
        throw new ApiError("request_timeout", `The upload was dropped: it sent less than ${rate.minBytesPerSecond} bytes per second over ${rate.windowMs / 1000} s. The URL is still usable: PUT the file again.`, {
          headers: { connection: "close" },
        });
      }
      if (!r.done) inWindow += r.value.byteLength;
      return r;
    },
    stop: () => clearInterval(timer),
    release: () => reader.releaseLock(),
  };
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

/**
 * The body as chunks, or null when it is empty (no Content-Length says so up front with
 * chunked encoding); reading it throws 408 when it comes in slower than `rate`. Call `stop`
 * once done with it, read to the end or not.
 */
async function nonEmptyBody(request: Request, rate: BodyRate): Promise<{ chunks: AsyncGenerator<Uint8Array> | null; stop: () => void }> {
  const raw = request.body?.getReader();
  if (!raw) return { chunks: null, stop: () => {} };
  const reader = timedReader(raw, rate);
  try {
    let first = await reader.read();
    while (!first.done && first.value.byteLength === 0) first = await reader.read();
    if (first.done) {
      reader.stop();
      reader.release();
      return { chunks: null, stop: () => {} };
    }
    const head = first.value;
    const chunks = (async function* () {
      try {
        yield head;
        for (let r = await reader.read(); !r.done; r = await reader.read()) yield r.value;
      } finally {
        reader.stop();
        reader.release();
      }
    })();
    return { chunks, stop: reader.stop };
  } catch (err) {
    reader.stop();
    throw err;
  }
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
  // The recording's device, if any, has its own share of the slots; a device token's recordings are always its device's.
  const deviceId = findRecording(db, tenant, credential.recording_id)?.device_id ?? null;
  const release = slots.take(credential.project_id, deviceId, credential.id);
  let stopTiming = () => {};
  try {
    const { chunks: body, stop } = await nonEmptyBody(request, { minBytesPerSecond: deps.config.uploads.minBytesPerSecond, windowMs: deps.config.uploads.rateWindowMs });
    stopTiming = stop;
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
    stopTiming();
    release();
  }
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
    if (upload.chunk_index !== null) {
      const budget = uploadBudget(deps, tenant, r.id, upload.chunk_index);
      if (written.size > budget.bytes) throw new ApiError("payload_too_large", budget.why);
    }
    markUploadReceived(db, tenant, upload.credential_id, key, written.size, now);
    let replaced: string | null;
    if (upload.chunk_index === null) {
      replaced = r.storage_key;
      stageWholeFile(db, tenant, r.id, { storageKey: key, size: written.size, mimeType: r.mime_type ?? audioTypeOf(upload.content_type) }, now);
    } else {
      replaced = upsertChunk(db, tenant, r.id, { chunk_index: upload.chunk_index, storage_key: key, size_bytes: written.size }, now);
    }
    if (replaced) queue.enqueue(DELETE_OBJECTS_JOB, { keys: [replaced] });
  });
}
