import type { Deps } from "../../deps";
import type { Principal } from "../../http/auth";
import { issueCredential, UPLOAD_TARGET_PATH } from "../../http/credentials";
import type { Tenant } from "../../tenancy";
import { ApiError } from "../../http/errors";
import { DELETE_OBJECTS_JOB } from "./objects";
import type { UploadUrl, UploadUrlBody } from "./schema";
import { loadRecording } from "./service";
import { deleteChunkRows, listChunks } from "./chunks-store";
import { reopenForUpload, type StoredRecording } from "./store";
import { assertRoomForUpload, assertWithinBudget, refusal } from "./upload-rules";
import { insertUpload } from "./upload-store";

/**
 * Step 1 of the upload flow, POST /recordings/{id}/upload-url: a short-lived, single-use up_ token in a URL on this
 * server. On a recording in integrity_failure it is also the repair (spec 3.3): the failed
 * completion and bytes are dropped and the recording takes a fresh upload.
 */
export function issueUploadUrl(deps: Deps, principal: Principal, id: string, body: UploadUrlBody, now: Date): UploadUrl {
  const { db, config } = deps;
  const expiresAt = new Date(now.getTime() + config.uploads.tokenTtlSeconds * 1000);
  const token = db.transaction(() => {
    let r = loadRecording(db, principal, id);
    if (r.status === "integrity_failure") {
      repair(deps, principal, r, now);
      r = loadRecording(db, principal, id);
    }
    const why = refusal(r);
    if (why) throw new ApiError("resource_conflict", why);
    const chunkIndex = body.chunk_index ?? null;
    if (chunkIndex === null && r.is_streaming) {
      throw new ApiError("resource_conflict", `Recording ${id} is a streaming upload: ask for a URL per chunk with chunk_index.`, { param: "chunk_index" });
    }
    if (chunkIndex !== null && !r.is_streaming && r.storage_key) {
      throw new ApiError("resource_conflict", `Recording ${id} already has a whole-file upload; chunks cannot be added to it.`, { param: "chunk_index" });
    }
    if (body.file_size_bytes !== undefined) assertWithinBudget(deps, principal, id, chunkIndex, body.file_size_bytes, "file_size_bytes");
    // Last: a 507 asks the client to try again later, which only helps a request that is otherwise right.
    assertRoomForUpload(deps, body.file_size_bytes ?? 0);
    const issued = issueCredential(db, { kind: "upload", projectId: principal.projectId, mode: principal.mode, recordingId: id, expiresAt, now });
    insertUpload(
      db,
      principal,
      { credentialId: issued.id, recordingId: id, chunkIndex, contentType: body.content_type ?? null, declaredSize: body.file_size_bytes ?? null },
      now,
    );
    return issued.token;
  })();
  return {
    upload_url: `${config.publicUrl}${UPLOAD_TARGET_PATH}${token}`,
    method: "PUT",
    headers: { "Content-Type": body.content_type ?? "application/octet-stream" },
    expires_at: expiresAt.toISOString(),
  };
}

/**
 * The repair of a recording in integrity_failure (spec 3.3): the failed completion goes, and
 * so do the bytes that failed, so only a new PUT can complete it (a completion without one
 * answers staging_missing instead of re-verifying the bad bytes). Chunk rows go too, since
 * which chunk was bad is unknown; chunk_count stays, so all of them must be sent again.
 * Objects are removed by job in this transaction (decision 031). The streaming `assembled`
 * object is not: nothing refers to it, the next assembly overwrites it, and a late deletion
 * could hit that new object.
 */
function repair(deps: Deps, tenant: Tenant, r: StoredRecording, now: Date): void {
  const { db, queue } = deps;
  const keys = r.is_streaming ? listChunks(db, tenant, r.id).map((c) => c.storage_key) : r.storage_key ? [r.storage_key] : [];
  reopenForUpload(db, tenant, r.id, r.is_streaming, now);
  if (r.is_streaming) deleteChunkRows(db, tenant, r.id);
  if (keys.length) queue.enqueue(DELETE_OBJECTS_JOB, { keys });
}
