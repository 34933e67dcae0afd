import type { Database } from "bun:sqlite";
import type { Tenant } from "../../tenancy";
import { type Page, type PageRequest, paginate } from "../../http/pagination";
import type { OtaStatus } from "./schema";

/** Firmware releases belong to an organization, not a project or mode (spec 2.1 fw_). */
export type FirmwareRow = {
  id: string;
  organization_id: string;
  version: string;
  model: "parley_pin" | "parley_note";
  notes: string | null;
  sha256: string;
  size_bytes: number;
  published_at: string | null;
  created_at: string;
};

export const IN_FLIGHT: readonly OtaStatus[] = ["pending", "delivered"];

export type OtaRow = {
  id: string;
  project_id: string;
  mode: string;
  device_id: string;
  firmware_release_id: string;
  status: OtaStatus;
  progress: string | null;
  assigned_at: string;
  delivered_at: string | null;
  applied_at: string | null;
  failed_at: string | null;
  cancelled_at: string | null;
  error_message: string | null;
  created_at: string;
};

export function insertFirmware(db: Database, row: FirmwareRow): void {
  db.query(
    `INSERT INTO firmware_releases (id, organization_id, version, model, notes, sha256, size_bytes, published_at, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(row.id, row.organization_id, row.version, row.model, row.notes, row.sha256, row.size_bytes, row.published_at, row.created_at);
}

export function findFirmware(db: Database, organizationId: string, id: string): FirmwareRow | null {
  return db.query<FirmwareRow, [string, string]>("SELECT * FROM firmware_releases WHERE id = ? AND organization_id = ?").get(id, organizationId);
}

export function findFirmwareByVersion(db: Database, organizationId: string, model: string, version: string): FirmwareRow | null {
  return db
    .query<FirmwareRow, [string, string, string]>("SELECT * FROM firmware_releases WHERE organization_id = ? AND model = ? AND version = ?")
    .get(organizationId, model, version);
}

export function publishFirmware(db: Database, id: string, now: string): void {
  db.query("UPDATE firmware_releases SET published_at = ? WHERE id = ? AND published_at IS NULL").run(now, id);
}

export function listFirmwareRows(
  db: Database,
  organizationId: string,
  filter: { model?: string; publishedOnly: boolean },
  page: PageRequest,
): Page<FirmwareRow> {
  const where = ["organization_id = ?"];
  const params: string[] = [organizationId];
  if (filter.publishedOnly) where.push("published_at IS NOT NULL");
  if (filter.model) {
    where.push("model = ?");
    params.push(filter.model);
  }
  return paginate<FirmwareRow, FirmwareRow>(db, { table: "firmware_releases", where, params }, page, (r) => r);
}

export function insertOta(db: Database, tenant: Tenant, row: Pick<OtaRow, "id" | "device_id" | "firmware_release_id" | "assigned_at">): void {
  db.query(
    `INSERT INTO ota_assignments (id, project_id, mode, device_id, firmware_release_id, status, assigned_at, created_at)
     VALUES (?, ?, ?, ?, ?, 'pending', ?, ?)`,
  ).run(row.id, tenant.projectId, tenant.mode, row.device_id, row.firmware_release_id, row.assigned_at, row.assigned_at);
}

export function findOta(db: Database, tenant: Tenant, deviceId: string, id: string): OtaRow | null {
  return db
    .query<OtaRow, [string, string, string, string]>("SELECT * FROM ota_assignments WHERE id = ? AND device_id = ? AND project_id = ? AND mode = ?")
    .get(id, deviceId, tenant.projectId, tenant.mode);
}

/** The device's one assignment in flight (pending or delivered), if any. */
export function findInFlightOta(db: Database, tenant: Tenant, deviceId: string): OtaRow | null {
  return db
    .query<OtaRow, [string, string, string]>(
      "SELECT * FROM ota_assignments WHERE device_id = ? AND project_id = ? AND mode = ? AND status IN ('pending', 'delivered')",
    )
    .get(deviceId, tenant.projectId, tenant.mode);
}

export function listOtaRows(db: Database, tenant: Tenant, deviceId: string, page: PageRequest): Page<OtaRow> {
  return paginate<OtaRow, OtaRow>(
    db,
    { table: "ota_assignments", where: ["project_id = ?", "mode = ?", "device_id = ?"], params: [tenant.projectId, tenant.mode, deviceId] },
    page,
    (r) => r,
  );
}

/** Moves an assignment out of one of `from`; false when something else moved it first. */
export function transitionOta(
  db: Database,
  tenant: Tenant,
  id: string,
  from: readonly OtaStatus[],
  to: OtaStatus,
  fields: Partial<Pick<OtaRow, "delivered_at" | "applied_at" | "failed_at" | "cancelled_at" | "error_message" | "progress">> = {},
): boolean {
  const entries = Object.entries(fields);
  const sets = ["status = ?", ...entries.map(([k]) => `${k} = ?`)].join(", ");
  return (
    db
      .query(`UPDATE ota_assignments SET ${sets} WHERE id = ? AND project_id = ? AND mode = ? AND status IN (${from.map(() => "?").join(", ")})`)
      .run(to, ...entries.map(([, v]) => v ?? null), id, tenant.projectId, tenant.mode, ...from).changes === 1
  );
}

/** A deleted device's assignment in flight is cancelled: nothing can fetch or report it any more. */
export function cancelInFlightOta(db: Database, tenant: Tenant, deviceId: string, now: string): void {
  db.query(
    "UPDATE ota_assignments SET status = 'cancelled', cancelled_at = ? WHERE device_id = ? AND status IN ('pending', 'delivered') AND project_id = ? AND mode = ?",
  ).run(now, deviceId, tenant.projectId, tenant.mode);
}
