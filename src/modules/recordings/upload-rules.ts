import type { Config } from "../../config";
import type { Deps } from "../../deps";
import { ApiError, insufficientStorage } from "../../http/errors";
import { applianceVolumes } from "../../storage";
import { measureVolume } from "../../storage/volumes";
import { PRE_UPLOAD } from "./schema";
import { chunkBytes } from "./chunks-store";
import type { StoredRecording } from "./store";
import type { Tenant } from "../../tenancy";
import type { UploadRow } from "./upload-store";

/*
 * What every step of the upload flow (upload-url -> upload-receive -> upload-complete ->
 * upload-verify) asks before it lets bytes in: does the recording take bytes now, how many
 * may it take (the one size rule: only this file reads the limit), and is there room.
 */

/** Why a recording takes no bytes now, or null when it does. */
export function refusal(r: StoredRecording): string | null {
  if (r.verification === "pending") return `Recording ${r.id} is being verified; wait for upload-complete to answer.`;
  if (!PRE_UPLOAD.includes(r.status)) return `Recording ${r.id} is already uploaded (status ${r.status}).`;
  return null;
}

/** The most bytes one upload may have, whole file or all chunks together (PARLEY_MAX_UPLOAD_BYTES). */
export function maxUploadBytes(config: Pick<Config, "uploads">): number {
  return config.uploads.maxBytes;
}

/** How many bytes one upload URL may still write: the limit, less what the recording's other chunks hold. */
export function uploadBudget(deps: Deps, tenant: Tenant, recordingId: string, chunkIndex: number | null): { bytes: number; why: string } {
  const max = maxUploadBytes(deps.config);
  if (chunkIndex === null) return { bytes: max, why: `Uploads are limited to ${max} bytes.` };
  const others = chunkBytes(deps.db, tenant, recordingId, chunkIndex);
  return { bytes: max - others, why: `Uploads are limited to ${max} bytes for all chunks together; the recording's other chunks hold ${others}.` };
}

/** 413 when an upload of `size` bytes would not fit its budget; `param` names the request field that stated the size. */
export function assertWithinBudget(deps: Deps, tenant: Tenant, recordingId: string, chunkIndex: number | null, size: number, param?: string): void {
  const budget = uploadBudget(deps, tenant, recordingId, chunkIndex);
  if (size > budget.bytes) throw new ApiError("payload_too_large", budget.why, param ? { param } : undefined);
}

/**
 * What one PUT may carry (decision 034): at most the upload limit less the recording's other
 * chunks, and exactly file_size_bytes when upload-url was told it (as an S3 URL signed with a
 * Content-Length would insist), so a truncated or padded body never becomes the staged file.
 */
export type SizeRule = { max: number; exact: number | null; tooLarge: string };

export function putSizeRule(deps: Deps, tenant: Tenant, upload: UploadRow): SizeRule {
  const budget = uploadBudget(deps, tenant, upload.recording_id, upload.chunk_index);
  const declared = upload.declared_size;
  if (declared !== null && declared <= budget.bytes)
    return { max: declared, exact: declared, tooLarge: `This upload URL was issued for ${declared} bytes (file_size_bytes).` };
  return { max: budget.bytes, exact: declared, tooLarge: budget.why };
}

/** 413 when a streaming upload's recorded chunk sizes add up to more than the limit (PUTs that raced, a limit lowered since). */
export function assertChunksWithinLimit(deps: Deps, tenant: Tenant, r: StoredRecording): void {
  const total = chunkBytes(deps.db, tenant, r.id);
  const max = maxUploadBytes(deps.config);
  if (total > max) throw new ApiError("payload_too_large", `The chunks of recording ${r.id} add up to ${total} bytes; uploads are limited to ${max} bytes.`);
}

const MB = 1024 * 1024;

/**
 * Refuses a new upload up front (507) while a volume it writes to has less than
 * PARLEY_MIN_FREE_MB free, or would have once `incomingBytes` landed, instead of filling
 * the disk to zero: the database, its WAL and the jobs that follow need room too.
 */
export function assertRoomForUpload(deps: Pick<Deps, "config">, incomingBytes = 0): void {
  const floor = deps.config.minFreeBytes;
  for (const volume of applianceVolumes(deps.config)) {
    const space = measureVolume(volume);
    // The bytes land on the audio volume (which is often the database's too, and then counts there).
    const incoming = volume.name === "audio" ? incomingBytes : 0;
    if (space && space.freeBytes - incoming < floor) {
      const free = Math.floor(space.freeBytes / MB);
      const upload = incoming ? ` for an upload of ${Math.ceil(incoming / MB)} MB` : "";
      throw insufficientStorage(
        volume.name,
        `The appliance's ${volume.name} volume has ${free} MB free${upload} and keeps ${floor / MB} MB free (PARLEY_MIN_FREE_MB)`,
      );
    }
  }
}
