import type { Database, SQLQueryBindings } from "bun:sqlite";
import { sha256Hex } from "../../crypto";
import type { Tenant } from "../../tenancy";
import { type Page, type PageRequest, paginate } from "../../http/pagination";
import type { Channel, Device, DeviceState } from "./schema";
import type { DeviceSettings, SettingsOverrides } from "../config/device-settings";

/** A devices row as stored: JSON columns still text. The heartbeat module reads and writes it too. */
export type DeviceRow = {
  id: string;
  project_id: string;
  mode: string;
  serial_number: string;
  name: string | null;
  model: Device["model"];
  firmware_version: string | null;
  mac_address: string | null;
  capabilities: number;
  status: Device["status"];
  end_user_id: string | null;
  bound_at: string | null;
  battery_percent: number | null;
  storage_used_mb: number | null;
  storage_total_mb: number | null;
  signal_strength_dbm: number | null;
  last_heartbeat_at: string | null;
  last_seen_by: Channel | null;
  last_synced_at: string | null;
  last_synced_by: string | null;
  recording_state: string | null;
  metadata: string;
  settings: string;
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
};

/** The API shape of a row; `settings` is the resolved configuration (src/modules/config). */
export function toDevice(row: DeviceRow, settings: DeviceSettings): Device {
  return {
    id: row.id,
    serial_number: row.serial_number,
    name: row.name,
    model: row.model,
    firmware_version: row.firmware_version,
    mac_address: row.mac_address,
    capabilities: row.capabilities,
    status: row.status,
    end_user_id: row.end_user_id,
    battery_percent: row.battery_percent,
    storage_used_mb: row.storage_used_mb,
    storage_total_mb: row.storage_total_mb,
    signal_strength_dbm: row.signal_strength_dbm,
    last_heartbeat_at: row.last_heartbeat_at,
    recording_state: row.recording_state ? JSON.parse(row.recording_state) : null,
    metadata: JSON.parse(row.metadata),
    settings,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

/** The columns GET /state shows, and end_user_id for end-user confinement. */
export type DeviceStateRow = Pick<
  DeviceRow,
  | "id"
  | "end_user_id"
  | "recording_state"
  | "battery_percent"
  | "storage_used_mb"
  | "storage_total_mb"
  | "last_heartbeat_at"
  | "last_synced_at"
  | "last_seen_by"
  | "last_synced_by"
>;

/** GET /state is polled every few seconds per device: it reads its ten columns, not the whole row. */
export function findDeviceStateRow(db: Database, tenant: Tenant, id: string): DeviceStateRow | null {
  return db
    .query<DeviceStateRow, [string, string, string]>(
      `SELECT id, end_user_id, recording_state, battery_percent, storage_used_mb, storage_total_mb, last_heartbeat_at, last_synced_at, last_seen_by, last_synced_by
         FROM devices WHERE id = ? AND project_id = ? AND mode = ? AND deleted_at IS NULL`,
    )
    .get(id, tenant.projectId, tenant.mode);
}

export function toDeviceState(row: DeviceStateRow): DeviceState {
  return {
    device_id: row.id,
    recording_state: row.recording_state ? JSON.parse(row.recording_state) : null,
    battery_percent: row.battery_percent,
    storage_used_mb: row.storage_used_mb,
    storage_total_mb: row.storage_total_mb,
    last_heartbeat_at: row.last_heartbeat_at,
    last_synced_at: row.last_synced_at,
    last_seen_by: row.last_seen_by,
    last_synced_by: row.last_synced_by,
  };
}

/** The device-level settings overrides (only what was set on the device itself). */
export function deviceSettingsOverrides(row: DeviceRow): SettingsOverrides {
  return JSON.parse(row.settings);
}

export type NewDevice = Pick<
  DeviceRow,
  "id" | "serial_number" | "name" | "model" | "firmware_version" | "mac_address" | "capabilities" | "metadata" | "created_at"
>;

export function insertDevice(db: Database, tenant: Tenant, d: NewDevice): void {
  db.query(
    `INSERT INTO devices (id, project_id, mode, serial_number, name, model, firmware_version, mac_address, capabilities, metadata, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    d.id,
    tenant.projectId,
    tenant.mode,
    d.serial_number,
    d.name,
    d.model,
    d.firmware_version,
    d.mac_address,
    d.capabilities,
    d.metadata,
    d.created_at,
    d.created_at,
  );
}

/** A device of the tenant that is not deleted, or null. */
export function findDeviceRow(db: Database, tenant: Tenant, id: string): DeviceRow | null {
  return db
    .query<DeviceRow, [string, string, string]>("SELECT * FROM devices WHERE id = ? AND project_id = ? AND mode = ? AND deleted_at IS NULL")
    .get(id, tenant.projectId, tenant.mode);
}

/** Any device ever registered with this serial, deleted ones included (serials are reserved for life). */
export function findDeviceBySerial(db: Database, tenant: Tenant, serial: string): DeviceRow | null {
  return db
    .query<DeviceRow, [string, string, string]>("SELECT * FROM devices WHERE serial_number = ? AND project_id = ? AND mode = ?")
    .get(serial, tenant.projectId, tenant.mode);
}

export function updateDeviceFields(
  db: Database,
  tenant: Tenant,
  id: string,
  fields: Partial<Pick<DeviceRow, "firmware_version" | "metadata" | "settings" | "status" | "end_user_id" | "bound_at" | "deleted_at">>,
  now: string,
): void {
  const entries = Object.entries(fields).filter(([, v]) => v !== undefined);
  const sets = [...entries.map(([k]) => `${k} = ?`), "updated_at = ?"].join(", ");
  db.query(`UPDATE devices SET ${sets} WHERE id = ? AND project_id = ? AND mode = ?`).run(
    ...(entries.map(([, v]) => v) as SQLQueryBindings[]),
    now,
    id,
    tenant.projectId,
    tenant.mode,
  );
}

/** Whether a device token is still live now: two refreshes racing on one token must not both rotate. */
export function deviceTokenIsLive(db: Database, credentialId: string): boolean {
  return db.query("SELECT 1 FROM credentials WHERE id = ? AND kind = 'device' AND revoked_at IS NULL").get(credentialId) !== null;
}

/** When a device token was issued and whether it was revoked since; null once purged (a week after revocation). */
export function deviceTokenRecord(db: Database, deviceId: string, token: string): { created_at: string; revoked_at: string | null } | null {
  return db
    .query<{ created_at: string; revoked_at: string | null }, [string, string]>(
      "SELECT created_at, revoked_at FROM credentials WHERE token_hash = ? AND kind = 'device' AND device_id = ?",
    )
    .get(sha256Hex(token), deviceId);
}

export type DeviceFilter = { serialNumber?: string; status?: string; endUserId?: string; model?: string };

export function listDeviceRows(db: Database, tenant: Tenant, filter: DeviceFilter, page: PageRequest): Page<DeviceRow> {
  const where = ["project_id = ?", "mode = ?", "deleted_at IS NULL"];
  const params: SQLQueryBindings[] = [tenant.projectId, tenant.mode];
  const columns: [keyof DeviceFilter, string][] = [
    ["serialNumber", "serial_number"],
    ["status", "status"],
    ["endUserId", "end_user_id"],
    ["model", "model"],
  ];
  for (const [key, column] of columns) {
    if (filter[key] === undefined) continue;
    where.push(`${column} = ?`);
    params.push(filter[key]);
  }
  return paginate<DeviceRow, DeviceRow>(db, { table: "devices", where, params }, page, (row) => row);
}
