import type { Database, SQLQueryBindings } from "bun:sqlite";
import type { Tenant } from "../../http/credentials";
import type { DeviceRow } from "../devices/store";

export type HeartbeatColumns = Partial<
  Pick<DeviceRow, "battery_percent" | "storage_used_mb" | "storage_total_mb" | "signal_strength_dbm" | "firmware_version" | "recording_state" | "last_seen_by" | "last_synced_by">
> & { last_heartbeat_at: string; last_synced_at: string };

/** What the heartbeat goes on with once its device row is written. */
export type HeartbeatDevice = { id: string; end_user_id: string | null; low_battery_notified_at: string | null };

/**
 * Writes what a heartbeat reported onto a bound, undeleted device row; absent fields keep
 * their value; clears the offline marker. Null when there is no such device. One
 * statement (UPDATE ... RETURNING) rather than a read before the write: a heartbeat's
 * statements are most of its cost.
 */
export function writeHeartbeat(db: Database, tenant: Tenant, deviceId: string, columns: HeartbeatColumns): HeartbeatDevice | null {
  const entries = Object.entries(columns).filter(([, v]) => v !== undefined);
  const sets = [...entries.map(([k]) => `${k} = ?`), "offline_notified_at = NULL"].join(", ");
  return db
    .query<HeartbeatDevice, SQLQueryBindings[]>(
      `UPDATE devices SET ${sets} WHERE id = ? AND project_id = ? AND mode = ? AND deleted_at IS NULL AND status = 'bound'
       RETURNING id, end_user_id, low_battery_notified_at`,
    )
    .get(...(entries.map(([, v]) => v) as SQLQueryBindings[]), deviceId, tenant.projectId, tenant.mode);
}

export function setLowBatteryNotified(db: Database, tenant: Tenant, deviceId: string, at: string | null): void {
  db.query("UPDATE devices SET low_battery_notified_at = ? WHERE id = ? AND project_id = ? AND mode = ?").run(at, deviceId, tenant.projectId, tenant.mode);
}

export type OfflineCandidate = Pick<DeviceRow, "id" | "project_id" | "mode" | "end_user_id" | "last_heartbeat_at" | "last_synced_at">;

/** Devices of every project silent since `before` and not yet reported offline. */
export function findNewlyOfflineDevices(db: Database, before: string): OfflineCandidate[] {
  return db
    .query<OfflineCandidate, [string]>(
      `SELECT id, project_id, mode, end_user_id, last_heartbeat_at, last_synced_at FROM devices
       WHERE deleted_at IS NULL AND status = 'bound' AND offline_notified_at IS NULL AND last_heartbeat_at IS NOT NULL AND last_heartbeat_at <= ?`,
    )
    .all(before);
}

/** Marks the device reported offline; false when a heartbeat or another sweep got there first. */
export function markOfflineNotified(db: Database, deviceId: string, lastHeartbeatAt: string, at: string): boolean {
  return (
    db.query("UPDATE devices SET offline_notified_at = ? WHERE id = ? AND offline_notified_at IS NULL AND last_heartbeat_at = ?").run(at, deviceId, lastHeartbeatAt).changes === 1
  );
}
