import type { Database } from "bun:sqlite";
import { existsSync } from "node:fs";
import type { Deps } from "../../deps";
import { requireOwnDeviceToken } from "../../http/access";
import type { Principal } from "../../http/auth";
import type { Tenant } from "../../tenancy";
import { ApiError } from "../../http/errors";
import type { Page, PageRequest } from "../../http/pagination";
import { newId } from "../../ids";
import { loadDeviceRow } from "../devices/service";
import { firmwarePath } from "./releases";
import type { OtaAssignment } from "./schema";
import {
  cancelInFlightOta,
  type FirmwareRow,
  findFirmware,
  findInFlightOta,
  findOta,
  IN_FLIGHT,
  insertOta,
  listOtaRows,
  type OtaRow,
  transitionOta,
} from "./store";

/** What a device reports about an assignment in its heartbeat (`ota_status`, decision 026). */
export type OtaReport = {
  ota_id: string;
  status: "downloading" | "installing" | "applied" | "failed";
  progress_percent?: number;
  error_message?: string | null;
};

function present(db: Database, row: OtaRow): OtaAssignment {
  const fw = db.query<FirmwareRow, [string]>("SELECT * FROM firmware_releases WHERE id = ?").get(row.firmware_release_id) as FirmwareRow;
  return {
    id: row.id,
    device_id: row.device_id,
    firmware_release_id: row.firmware_release_id,
    status: row.status,
    assigned_at: row.assigned_at,
    delivered_at: row.delivered_at,
    applied_at: row.applied_at,
    error_message: row.error_message,
    progress: row.progress ? JSON.parse(row.progress) : null,
    firmware: {
      version: fw.version,
      model: fw.model,
      sha256: fw.sha256,
      size_bytes: fw.size_bytes,
      download_path: `/v1/devices/${row.device_id}/ota/${row.id}/firmware`,
    },
  };
}

/** POST /devices/{id}/ota (spec 4.2): one assignment in flight per device; the release must be published, in the organization, for the device's model. */
export function assignOta(db: Database, principal: Principal, deviceId: string, firmwareReleaseId: string, now: Date): OtaAssignment {
  return db.transaction(() => {
    const device = loadDeviceRow(db, principal, deviceId);
    const release = findFirmware(db, principal.organizationId, firmwareReleaseId);
    if (!release?.published_at) throw new ApiError("not_found", "FirmwareRelease not found", { param: "firmware_release_id" });
    if (release.model !== device.model) {
      throw new ApiError("invalid_request", `Firmware ${release.version} is for ${release.model}; this device is a ${device.model}.`, {
        param: "firmware_release_id",
      });
    }
    const current = findInFlightOta(db, principal, deviceId);
    if (current)
      throw new ApiError("resource_conflict", `OTA assignment ${current.id} is already in flight (${current.status}); cancel it or wait for it to finish.`);
    const id = newId("ota_", now.getTime());
    insertOta(db, principal, { id, device_id: deviceId, firmware_release_id: release.id, assigned_at: now.toISOString() });
    return present(db, findOta(db, principal, deviceId, id) as OtaRow);
  })();
}

function loadOta(db: Database, principal: Principal, deviceId: string, id: string): OtaRow {
  loadDeviceRow(db, principal, deviceId);
  const row = findOta(db, principal, deviceId, id);
  if (!row) throw new ApiError("not_found", "OTA assignment not found", { param: "ota_id" });
  return row;
}

export function getOta(db: Database, principal: Principal, deviceId: string, id: string): OtaAssignment {
  return present(db, loadOta(db, principal, deviceId, id));
}

export function listOta(db: Database, principal: Principal, deviceId: string, page: PageRequest): Page<OtaAssignment> {
  loadDeviceRow(db, principal, deviceId);
  const result = listOtaRows(db, principal, deviceId, page);
  return { ...result, data: result.data.map((r) => present(db, r)) };
}

/** Cancel while pending or delivered; a device already installing learns it from the next heartbeat (ota: null). */
export function cancelOta(db: Database, principal: Principal, deviceId: string, id: string, now: Date): OtaAssignment {
  return db.transaction(() => {
    const row = loadOta(db, principal, deviceId, id);
    if (!transitionOta(db, principal, id, IN_FLIGHT, "cancelled", { cancelled_at: now.toISOString() })) {
      throw new ApiError("resource_conflict", `OTA assignment is already ${row.status}.`);
    }
    return present(db, findOta(db, principal, deviceId, id) as OtaRow);
  })();
}

/**
 * Heartbeat side: applies the device's report, then hands over the assignment in flight
 * (pending -> delivered on first hand-over; repeated while in flight so a lost response
 * is harmless). Not over a Bluetooth relay: the spec has the device receive nothing while
 * the phone app holds it.
 */
export function otaForHeartbeat(
  db: Database,
  tenant: Tenant,
  deviceId: string,
  report: OtaReport | undefined,
  relayed: boolean,
  now: Date,
): OtaAssignment | null {
  const at = now.toISOString();
  if (report) {
    const row = findOta(db, tenant, deviceId, report.ota_id);
    if (row && IN_FLIGHT.includes(row.status)) {
      const deliveredAt = row.delivered_at ?? at;
      if (report.status === "applied") transitionOta(db, tenant, row.id, IN_FLIGHT, "applied", { applied_at: at, delivered_at: deliveredAt });
      else if (report.status === "failed") {
        transitionOta(db, tenant, row.id, IN_FLIGHT, "failed", {
          failed_at: at,
          delivered_at: deliveredAt,
          error_message: report.error_message ?? "The device reported a failed update.",
        });
      } else {
        const progress: OtaAssignment["progress"] = { stage: report.status, percent: report.progress_percent ?? null, reported_at: at };
        transitionOta(db, tenant, row.id, IN_FLIGHT, "delivered", { delivered_at: deliveredAt, progress: JSON.stringify(progress) });
      }
    }
  }
  const current = findInFlightOta(db, tenant, deviceId);
  if (!current || relayed) return null;
  if (current.status === "pending") transitionOta(db, tenant, current.id, ["pending"], "delivered", { delivered_at: at });
  return present(db, findOta(db, tenant, deviceId, current.id) as OtaRow);
}

/**
 * GET /devices/{id}/ota/{ota_id}/firmware (device token): the file of an assignment in
 * flight, with its sha256. A release whose file has gone from the data dir (a restore
 * without data/firmware/, a hand deletion) is 404 not_found: the device reports the
 * assignment failed with that message, so the operator sees it on the assignment, and the
 * server log names the missing path. Retrying could not help until someone restores it.
 */
export function firmwareDownload(
  deps: Pick<Deps, "db" | "config" | "log">,
  principal: Principal,
  deviceId: string,
  otaId: string,
): { path: string; sha256: string; version: string } {
  const { db } = deps;
  requireOwnDeviceToken(principal, deviceId, "Only the device's own token downloads its firmware.");
  const row = findOta(db, principal, deviceId, otaId);
  if (!row || !IN_FLIGHT.includes(row.status)) throw new ApiError("not_found", "OTA assignment not found or no longer in flight", { param: "ota_id" });
  const fw = findFirmware(db, principal.organizationId, row.firmware_release_id) as FirmwareRow;
  const path = firmwarePath(deps.config.dataDir, fw.id);
  if (!existsSync(path)) {
    deps.log.error("firmware file missing", { firmware_release_id: fw.id, path, ota_id: otaId });
    throw new ApiError("not_found", `The image of firmware ${fw.version} (${fw.id}) is missing on the server; report the update as failed.`);
  }
  return { path, sha256: fw.sha256, version: fw.version };
}

/** Firmware follows a device's deletion (its OTA in flight is cancelled): registered on every Deps by buildDeps (decision 083). */
export function registerFirmwareCascades(deps: Pick<Deps, "db" | "cascades">): void {
  deps.cascades.on("deviceDeleted", "firmware", ({ tenant, deviceId, now }) => cancelInFlightOta(deps.db, tenant, deviceId, now.toISOString()));
}
