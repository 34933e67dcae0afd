import type { Database, SQLQueryBindings } from "bun:sqlite";
// The heartbeat's and the offline sweep's writes of the devices table: the devices module
// owns the table (decision 132), heartbeats calls these through devices/service.ts.
import type { Tenant } from "../../tenancy";
import type { DeviceRow } from "./store";

/** What a heartbeat reports onto the device row; null keeps the stored value (recording_state: see `recordingStateSent`). */
export type HeartbeatColumns = Pick<
  DeviceRow,
  | "battery_percent"
  | "storage_used_mb"
  | "storage_total_mb"
  | "signal_strength_dbm"
  | "firmware_version"
  | "recording_state"
  | "last_seen_by"
  | "last_synced_by"
> & {
  /** recording_state may be sent as null to clear it, so absence is told apart by this flag. */
  recordingStateSent: boolean;
  last_heartbeat_at: string;
  last_synced_at: string;
};

/**
 * What the heartbeat goes on with once its device row is written, including whether the
 * device has commands or an OTA assignment in flight: most heartbeats have neither, and
 * then skip the statements that would find, settle and hand them over.
 */
export type HeartbeatDevice = {
  id: string;
  end_user_id: string | null;
  low_battery_notified_at: string | null;
  has_open_commands: 0 | 1;
  has_ota_in_flight: 0 | 1;
};

/**
 * Writes what a heartbeat reported onto a bound, undeleted device row and clears the
 * offline marker. Null when there is no such device. One fixed statement (UPDATE ...
 * RETURNING) rather than a read before the write or SQL built per call: a heartbeat's
 * statements are most of its cost.
 */
export function writeHeartbeat(db: Database, tenant: Tenant, deviceId: string, c: HeartbeatColumns): HeartbeatDevice | null {
  return db
    .query<HeartbeatDevice, SQLQueryBindings[]>(
      `UPDATE devices SET
         battery_percent = coalesce(?, battery_percent), storage_used_mb = coalesce(?, storage_used_mb),
         storage_total_mb = coalesce(?, storage_total_mb), signal_strength_dbm = coalesce(?, signal_strength_dbm),
         firmware_version = coalesce(?, firmware_version), recording_state = iif(?, ?, recording_state),
         last_seen_by = coalesce(?, last_seen_by), last_synced_by = coalesce(?, last_synced_by),
         last_heartbeat_at = ?, last_synced_at = ?, offline_notified_at = NULL
       WHERE id = ? AND project_id = ? AND mode = ? AND deleted_at IS NULL AND status = 'bound'
       RETURNING id, end_user_id, low_battery_notified_at,
         EXISTS (SELECT 1 FROM device_commands WHERE device_id = devices.id AND status IN ('pending', 'delivered')) AS has_open_commands,
         EXISTS (SELECT 1 FROM ota_assignments WHERE device_id = devices.id AND status IN ('pending', 'delivered')) AS has_ota_in_flight`,
    )
    .get(
      c.battery_percent,
      c.storage_used_mb,
      c.storage_total_mb,
      c.signal_strength_dbm,
      c.firmware_version,
      c.recordingStateSent,
      c.recording_state,
      c.last_seen_by,
      c.last_synced_by,
      c.last_heartbeat_at,
      c.last_synced_at,
      deviceId,
      tenant.projectId,
      tenant.mode,
    );
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
    db
      .query("UPDATE devices SET offline_notified_at = ? WHERE id = ? AND offline_notified_at IS NULL AND last_heartbeat_at = ?")
      .run(at, deviceId, lastHeartbeatAt).changes === 1
  );
}
