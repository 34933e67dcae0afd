import type { Database } from "bun:sqlite";
import { requireOwnDeviceToken } from "../../http/access";
import type { Principal } from "../../http/auth";
import type { Tenant } from "../../tenancy";
import { ApiError } from "../../http/errors";
import type { GroupCommitter } from "../../db/group-commit";
import { type Outbox, recordEvent } from "../../events/outbox";
import { applyCommandResults, deliverPendingCommands, reconcileRecordingCommands } from "../commands/runtime";
import { type CommandDeps, openCommands, presentCommand } from "../commands/service";
import { otaForHeartbeat } from "../firmware/ota";
import type { HeartbeatBody, HeartbeatResponse } from "./schema";
import { findNewlyOfflineDevices, type HeartbeatDevice, markOfflineNotified, setLowBatteryNotified, writeHeartbeat } from "../devices/service";

/** device.low_battery fires when the battery drops below this, once per dip (spec 6). */
export const LOW_BATTERY_PERCENT = 20;
/** device.offline fires after this long without a sync (spec 6). */
export const OFFLINE_AFTER_MS = 24 * 60 * 60 * 1000;

/** What a heartbeat needs: the command service's deps, the outbox (device.low_battery) and the group committer it shares. */
export type HeartbeatDeps = CommandDeps & Outbox & { groupCommit: GroupCommitter };

/**
 * POST /devices/{id}/heartbeat, atomically: record what the device reported, settle
 * command results and start/stop reconciliation, emit device.low_battery on a new dip,
 * then hand over pending commands (pending -> delivered) and the OTA assignment in flight.
 * Heartbeats arriving together share one commit (group commit); each is still all or nothing.
 */
export function recordHeartbeat(deps: HeartbeatDeps, principal: Principal, deviceId: string, body: HeartbeatBody, now: Date): Promise<HeartbeatResponse> {
  requireOwnDeviceToken(principal, deviceId, "Heartbeats are sent with the device's own token (dtok_).");
  return deps.groupCommit.run(() => applyHeartbeat(deps, principal, deviceId, body, now));
}

function applyHeartbeat(deps: HeartbeatDeps, principal: Principal, deviceId: string, body: HeartbeatBody, now: Date): HeartbeatResponse {
  const { db } = deps;
  const at = now.toISOString();
  const device = writeHeartbeat(db, principal, deviceId, {
    battery_percent: body.battery_percent ?? null,
    storage_used_mb: body.storage_used_mb ?? null,
    storage_total_mb: body.storage_total_mb ?? null,
    signal_strength_dbm: body.signal_strength_dbm ?? null,
    firmware_version: body.firmware_version ?? null,
    recordingStateSent: body.recording_state !== undefined,
    recording_state: body.recording_state ? JSON.stringify(body.recording_state) : null,
    last_seen_by: body.channel ?? null,
    last_synced_by: body.channel ?? null,
    last_heartbeat_at: at,
    last_synced_at: at,
  });
  if (!device) throw new ApiError("unauthorized", "The credential is invalid, expired or revoked.");
  if (body.battery_percent !== undefined) noteBattery(deps, principal, device, body.battery_percent, at, now);
  // Results, reconciliation and delivery only ever act on pending or delivered commands.
  let commands: HeartbeatResponse["commands"] = [];
  if (device.has_open_commands) {
    applyCommandResults(db, principal, deviceId, body.command_results ?? [], now);
    const open = openCommands(db, principal, deviceId);
    reconcileRecordingCommands(db, principal, open, body.recording_state?.device_state, now);
    commands = deliverPendingCommands(db, principal, open, now).map((row) => presentCommand(deps, principal, row));
  }
  // A report about an assignment no longer in flight is ignored either way.
  const ota = device.has_ota_in_flight ? otaForHeartbeat(db, principal, deviceId, body.ota_status, body.channel === "bluetooth", now) : null;
  return { commands, ota, server_time: at };
}

/** Once per dip: fire below 20 when not yet fired; re-arm when the battery is back at 20 or more. */
function noteBattery(deps: Outbox, tenant: Tenant, device: HeartbeatDevice, battery: number, at: string, now: Date): void {
  const { db } = deps;
  const notified = device.low_battery_notified_at;
  if (battery >= LOW_BATTERY_PERCENT) {
    if (notified) setLowBatteryNotified(db, tenant, device.id, null);
    return;
  }
  if (notified) return;
  setLowBatteryNotified(db, tenant, device.id, at);
  recordEvent(deps, tenant, "device.low_battery", { id: device.id, end_user_id: device.end_user_id, battery_percent: battery, last_sync_at: at }, now);
}

/** The periodic offline check: device.offline once per outage for bound devices silent 24 h or more. */
export function reportOfflineDevices(deps: Outbox, now: Date): number {
  const { db } = deps;
  let reported = 0;
  const before = new Date(now.getTime() - OFFLINE_AFTER_MS).toISOString();
  for (const d of findNewlyOfflineDevices(db, before)) {
    const lastHeartbeat = d.last_heartbeat_at as string;
    db.transaction(() => {
      if (!markOfflineNotified(db, d.id, lastHeartbeat, now.toISOString())) return;
      const lastSync = d.last_synced_at ?? lastHeartbeat;
      const hours = Math.floor((now.getTime() - Date.parse(lastSync)) / 3_600_000);
      recordEvent(
        deps,
        { projectId: d.project_id, mode: d.mode as Tenant["mode"] },
        "device.offline",
        { id: d.id, end_user_id: d.end_user_id, last_sync_at: lastSync, hours_offline: hours },
        now,
      );
      reported++;
    })();
  }
  return reported;
}
