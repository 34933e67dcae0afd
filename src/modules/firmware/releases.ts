import type { Database } from "bun:sqlite";
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { sha256Hex } from "../../crypto";
import type { Principal } from "../../http/auth";
import { notFound, requireOrganizationWriter } from "../../http/access";
import { ApiError } from "../../http/errors";
import type { Page, PageRequest } from "../../http/pagination";
import { newId } from "../../ids";
import { chunksOf, ObjectTooLargeError } from "../../storage";
import { LocalStorage } from "../../storage/local";
import type { FirmwareRelease } from "./schema";
import { type FirmwareRow, findFirmware, findFirmwareByVersion, insertFirmware, listFirmwareRows, publishFirmware } from "./store";

export function presentFirmware(row: FirmwareRow): FirmwareRelease {
  return {
    id: row.id,
    version: row.version,
    model: row.model,
    notes: row.notes,
    sha256: row.sha256,
    size_bytes: row.size_bytes,
    status: row.published_at ? "published" : "draft",
    published_at: row.published_at,
    created_at: row.created_at,
  };
}

/** Where a release's file lives: under the data dir, named by id (never by the uploaded name). */
export function firmwarePath(dataDir: string, id: string): string {
  return join(dataDir, "firmware", `${id}.bin`);
}

/** What describes a release apart from its image; the organization owns it (spec 2.1). */
export type ReleaseMeta = { organizationId: string; version: string; model: FirmwareRow["model"]; notes?: string | null };
export type NewRelease = ReleaseMeta & { file: string; publish?: boolean };

/** Larger than any wearable image; bounds what POST /firmware-releases writes to disk. */
export const FIRMWARE_MAX_BYTES = 64 * 1024 * 1024;

function checkNewRelease(db: Database, r: ReleaseMeta): void {
  if (r.version.length < 1 || r.version.length > 32) throw new ApiError("validation_error", "version must be 1-32 characters (spec 8).", { param: "version" });
  if (findFirmwareByVersion(db, r.organizationId, r.model, r.version)) {
    throw new ApiError("resource_already_exists", `Firmware ${r.version} for ${r.model} is already registered.`, { param: "version" });
  }
}

/**
 * Records a release whose image already sits at firmwarePath(id). The duplicate check is
 * repeated here, in the insert's transaction, because an upload streams for a while after
 * the first check; the loser's file is removed.
 */
function recordRelease(
  db: Database,
  dataDir: string,
  r: ReleaseMeta,
  id: string,
  image: { sha256: string; size: number },
  publish: boolean,
  now: Date,
): FirmwareRelease {
  const at = now.toISOString();
  const row: FirmwareRow = {
    id,
    organization_id: r.organizationId,
    version: r.version,
    model: r.model,
    notes: r.notes ?? null,
    sha256: image.sha256,
    size_bytes: image.size,
    published_at: publish ? at : null,
    created_at: at,
  };
  try {
    db.transaction(() => {
      checkNewRelease(db, r);
      insertFirmware(db, row);
    })();
  } catch (err) {
    rmSync(firmwarePath(dataDir, id), { force: true });
    throw err;
  }
  return presentFirmware(row);
}

/**
 * `parley firmware add`: copies the file under the data dir (written to a temp name and
 * renamed, so a crash never leaves a half file under a release id) and records its sha256.
 */
export function addFirmware(db: Database, dataDir: string, r: NewRelease, now: Date): FirmwareRelease {
  checkNewRelease(db, r);
  const bytes = readFileSync(r.file);
  const id = newId("fw_", now.getTime());
  const path = firmwarePath(dataDir, id);
  mkdirSync(join(dataDir, "firmware"), { recursive: true });
  writeFileSync(`${path}.tmp`, bytes);
  renameSync(`${path}.tmp`, path);
  return recordRelease(db, dataDir, r, id, { sha256: sha256Hex(bytes), size: bytes.length }, r.publish === true, now);
}

/**
 * POST /firmware-releases: streams the raw request body into the firmware folder through
 * the same atomic local write as audio (temp file, fsync, rename: never the whole image in
 * memory, never half a file under a release id), hashing it on the way, and records a
 * draft. Over FIRMWARE_MAX_BYTES is 413 and leaves nothing behind.
 */
export async function uploadFirmware(
  db: Database,
  dataDir: string,
  r: ReleaseMeta,
  body: ReadableStream<Uint8Array> | null,
  now: Date,
): Promise<FirmwareRelease> {
  checkNewRelease(db, r);
  const id = newId("fw_", now.getTime());
  const images = new LocalStorage(dataDir);
  const key = `firmware/${id}.bin`;
  const hash = createHash("sha256");
  async function* hashed() {
    for await (const chunk of chunksOf(body ?? new Blob([]).stream())) {
      hash.update(chunk);
      yield chunk;
    }
  }
  let size: number;
  try {
    ({ size } = await images.write(key, hashed(), { maxBytes: FIRMWARE_MAX_BYTES }));
  } catch (err) {
    if (err instanceof ObjectTooLargeError) throw new ApiError("payload_too_large", `Firmware images are limited to ${FIRMWARE_MAX_BYTES} bytes.`);
    throw err;
  }
  if (size === 0) {
    await images.remove(key);
    throw new ApiError("validation_error", "The request body must be the firmware image; it was empty.", { param: "body" });
  }
  return recordRelease(db, dataDir, r, id, { sha256: hash.digest("hex"), size }, false, now);
}

/** Who may create and publish releases through the API: the organization's writer (access.ts). */
export function authorizeReleaseWriter(principal: Principal): Principal {
  requireOrganizationWriter(
    principal,
    "Firmware releases belong to the whole organization: only a live secret key (sk_live_) not scoped to an end user can create or publish them.",
  );
  return principal;
}

/** `parley firmware publish` and POST /firmware-releases/{id}/publish: makes a release assignable and visible to API keys. Publishing twice is a no-op. */
export function publishRelease(db: Database, organizationId: string, id: string, now: Date): FirmwareRelease {
  if (!findFirmware(db, organizationId, id)) throw new ApiError("not_found", notFound.firmwareRelease(id), { param: "id" });
  publishFirmware(db, id, now.toISOString());
  return presentFirmware(findFirmware(db, organizationId, id) as FirmwareRow);
}

/** GET /firmware-releases: API keys see only published releases. */
export function listReleases(
  db: Database,
  organizationId: string,
  filter: { model?: string; publishedOnly: boolean },
  page: PageRequest,
): Page<FirmwareRelease> {
  const result = listFirmwareRows(db, organizationId, filter, page);
  return { ...result, data: result.data.map(presentFirmware) };
}

export function getPublishedRelease(db: Database, organizationId: string, id: string): FirmwareRelease {
  const row = findFirmware(db, organizationId, id);
  if (!row?.published_at) throw new ApiError("not_found", notFound.firmwareRelease(id), { param: "id" });
  return presentFirmware(row);
}
