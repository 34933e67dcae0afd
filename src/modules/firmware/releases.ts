import type { Database } from "bun:sqlite";
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { sha256Hex } from "../../crypto";
import { ApiError } from "../../http/errors";
import type { Page, PageRequest } from "../../http/pagination";
import { newId } from "../../ids";
import { type FirmwareRow, findFirmware, findFirmwareByVersion, insertFirmware, listFirmwareRows, publishFirmware } from "./store";

/** The firmware release record (its fields are "not shown" in the spec; decision 025). */
export type FirmwareRelease = {
  id: string;
  version: string;
  model: FirmwareRow["model"];
  notes: string | null;
  sha256: string;
  size_bytes: number;
  status: "draft" | "published";
  published_at: string | null;
  created_at: string;
};

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

export type NewRelease = { organizationId: string; version: string; model: FirmwareRow["model"]; file: string; notes?: string | null; publish?: boolean };

/**
 * `parley firmware add`: copies the file under the data dir (written to a temp name and
 * renamed, so a crash never leaves a half file under a release id) and records its sha256.
 */
export function addFirmware(db: Database, dataDir: string, r: NewRelease, now: Date): FirmwareRelease {
  if (r.version.length < 1 || r.version.length > 32) throw new ApiError("validation_error", "version must be 1-32 characters (spec 8).", { param: "version" });
  if (findFirmwareByVersion(db, r.organizationId, r.model, r.version)) {
    throw new ApiError("resource_already_exists", `Firmware ${r.version} for ${r.model} is already registered.`, { param: "version" });
  }
  const bytes = readFileSync(r.file);
  const id = newId("fw_", now.getTime());
  const path = firmwarePath(dataDir, id);
  mkdirSync(join(dataDir, "firmware"), { recursive: true });
  writeFileSync(`${path}.tmp`, bytes);
  renameSync(`${path}.tmp`, path);
  const at = now.toISOString();
  const row: FirmwareRow = {
    id,
    organization_id: r.organizationId,
    version: r.version,
    model: r.model,
    notes: r.notes ?? null,
    sha256: sha256Hex(bytes),
    size_bytes: bytes.length,
    published_at: r.publish ? at : null,
    created_at: at,
  };
  insertFirmware(db, row);
  return presentFirmware(row);
}

/** `parley firmware publish`: makes a release assignable and visible to API keys. Publishing twice is a no-op. */
export function publishRelease(db: Database, organizationId: string, id: string, now: Date): FirmwareRelease {
  if (!findFirmware(db, organizationId, id)) throw new ApiError("not_found", "FirmwareRelease not found");
  publishFirmware(db, id, now.toISOString());
  return presentFirmware(findFirmware(db, organizationId, id) as FirmwareRow);
}

/** GET /firmware-releases: API keys see only published releases. */
export function listReleases(db: Database, organizationId: string, filter: { model?: string; publishedOnly: boolean }, page: PageRequest): Page<FirmwareRelease> {
  const result = listFirmwareRows(db, organizationId, filter, page);
  return { ...result, data: result.data.map(presentFirmware) };
}

export function getPublishedRelease(db: Database, organizationId: string, id: string): FirmwareRelease {
  const row = findFirmware(db, organizationId, id);
  if (!row?.published_at) throw new ApiError("not_found", "FirmwareRelease not found", { param: "id" });
  return presentFirmware(row);
}
