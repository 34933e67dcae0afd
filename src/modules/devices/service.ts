import type { Database } from "bun:sqlite";
import type { GroupCommitter } from "../../db/group-commit";
import type { Deps } from "../../deps";
import { confineToEndUser, notFound, ownerOfDevice, PATH_ID, type Reference, requireOwnDeviceToken, requireUnconfined, visible } from "../../http/access";
import type { Principal } from "../../http/auth";
import { type CredentialStore, issueCredential, revokeDeviceCredentials } from "../../http/credentials";
import { ApiError } from "../../http/errors";
import type { Page } from "../../http/pagination";
import { newId } from "../../ids";
import type { Tenant } from "../../tenancy";
import type { ConfiguredDevice, DeviceSource } from "../config/device-source";
import { findOrganizationOverrides, findOverrides, organizationOf, resolveLoadedConfig } from "../config/service";
import { loadEndUser } from "../end-users/service";
import type { CreateDeviceBody, Device, DeviceSettingsView, DeviceState, ListDevicesQuery, UpdateDeviceBody } from "./schema";
import { CAPABILITY } from "./schema";
import { mergeSettings } from "../config/device-settings";
import {
  type DeviceRow,
  deviceSettingsOverrides,
  deviceTokenIsLive,
  deviceTokenRecord,
  findDeviceBySerial,
  findDeviceRow,
  findDeviceStateRow,
  insertDevice,
  listDeviceRows,
  toDevice,
  toDeviceState,
  updateDeviceFields,
} from "./store";
import { isOnline } from "./reachability";

/** What other modules (commands, recordings and heartbeats) use of the devices store: through this service, never the store itself (decision 083); config reads it through deviceSource. */
export { type DeviceRow, findDeviceRow } from "./store";
/** The heartbeat's hot path and the offline sweep write the device row through these (the devices module owns the table, decision 132). */
export { findNewlyOfflineDevices, type HeartbeatDevice, markOfflineNotified, setLowBatteryNotified, writeHeartbeat } from "./heartbeat-store";

/** A row as configuration sees it: its own settings overrides and its bound end user. */
const configured = (row: DeviceRow): ConfiguredDevice => ({
  id: row.id,
  end_user_id: row.end_user_id,
  settings: deviceSettingsOverrides(row),
  updated_at: row.updated_at,
});

/** The devices' rows as config reads and writes them (config's DeviceSource, in Deps: config sits below devices, decision 083). */
export const deviceSource: DeviceSource = {
  find: (db, tenant, id) => {
    const row = findDeviceRow(db, tenant, id);
    return row && configured(row);
  },
  saveSettings: (db, tenant, id, settings, now) => updateDeviceFields(db, tenant, id, { settings: JSON.stringify(settings) }, now),
};

/** A row as the API shows it: settings resolved through the configuration hierarchy. */
export function presentDevice(db: Database, tenant: Tenant, row: DeviceRow): Device {
  return toDevice(row, resolveLoadedConfig(db, tenant, { device: configured(row) }).settings);
}

/**
 * The device row a caller may see: the tenant's, not deleted, and for an end-user-scoped
 * key only a device bound to that end user. 404 "Device not found" otherwise (spec 4.2).
 */
export function loadDeviceRow(db: Database, principal: Principal, id: string, ref: Reference = PATH_ID): DeviceRow {
  return visible(principal, findDeviceRow(db, principal, id), ownerOfDevice, notFound.device(id), ref);
}

export function createDevice(db: Database, principal: Principal, body: CreateDeviceBody, now: Date): Device {
  requireUnconfined(principal, "register devices");
  const at = now.toISOString();
  return db.transaction(() => {
    const holder = findDeviceBySerial(db, principal, body.serial_number);
    if (holder) {
      const why = holder.deleted_at ? " (by a deleted device: serial numbers are reserved for life)" : "";
      throw new ApiError("resource_already_exists", `Serial number ${body.serial_number} is already registered${why}.`, { param: "serial_number" });
    }
    const id = newId("dev_", now.getTime());
    insertDevice(db, principal, {
      id,
      serial_number: body.serial_number,
      name: body.name ?? null,
      model: body.model,
      firmware_version: body.firmware_version ?? null,
      mac_address: body.mac_address?.toUpperCase().replaceAll("-", ":") ?? null,
      capabilities: body.capabilities ?? CAPABILITY.BLE,
      metadata: JSON.stringify(body.metadata ?? {}),
      created_at: at,
    });
    return presentDevice(db, principal, loadDeviceRow(db, principal, id));
  })();
}

export function getDevice(db: Database, principal: Principal, id: string): Device {
  return presentDevice(db, principal, loadDeviceRow(db, principal, id));
}

export function listDevices(db: Database, principal: Principal, query: ListDevicesQuery): Page<Device> {
  const endUserId = confineToEndUser(principal, query.end_user_id) ?? undefined;
  const filter = { serialNumber: query.serial_number, status: query.status, model: query.model, endUserId };
  const page = listDeviceRows(db, principal, filter, { limit: query.limit, cursor: query.cursor });
  return { ...page, data: page.data.map((row) => presentDevice(db, principal, row)) };
}

/** PATCH (spec 4.2): absent fields kept; settings deep-merged into the device's own overrides. */
export function updateDevice(db: Database, principal: Principal, id: string, body: UpdateDeviceBody, now: Date): Device {
  return db.transaction(() => {
    const row = loadDeviceRow(db, principal, id);
    const settings = body.settings ? JSON.stringify(mergeSettings(deviceSettingsOverrides(row), body.settings)) : undefined;
    updateDeviceFields(
      db,
      principal,
      id,
      { firmware_version: body.firmware_version, metadata: body.metadata && JSON.stringify(body.metadata), settings },
      now.toISOString(),
    );
    return getDevice(db, principal, id);
  })();
}

/** What ending a binding needs: the credentials it revokes and the cascades it fires. */
export type BindingDeps = CredentialStore & Pick<Deps, "cascades">;

/**
 * Everything that ends with a binding, inside the caller's transaction (unbind, end-user
 * deletion, device deletion, an executed factory reset): device tokens revoked and the
 * bindingEnded cascade fired, on which commands cancels the open commands and revokes reset
 * credentials, so a device rebound to someone else never receives the previous wearer's
 * commands nor honours their reset. Deletion also fires deviceDeleted, on which firmware
 * cancels the OTA assignment in flight; an unbind keeps it for the next wearer, since
 * firmware belongs to the device, not to whoever wore it.
 */
export function endBinding(deps: BindingDeps, tenant: Tenant, id: string, now: Date, options: { deleting?: boolean } = {}): void {
  const { db } = deps;
  const at = now.toISOString();
  const deletion = { tenant, deviceId: id, now };
  // Legal holds are asked before anything is touched (decision 133).
  if (options.deleting) deps.cascades.check("deviceDeleted", deletion);
  revokeDeviceCredentials(deps, id, now);
  deps.cascades.fire("bindingEnded", { tenant, deviceId: id, now });
  if (options.deleting) deps.cascades.fire("deviceDeleted", deletion);
  updateDeviceFields(db, tenant, id, { status: "unbound", end_user_id: null, bound_at: null, ...(options.deleting ? { deleted_at: at } : {}) }, at);
}

/** Soft delete: the row stays so its serial number remains reserved; its tokens stop working. */
export function deleteDevice(deps: BindingDeps & Pick<Deps, "audit">, principal: Principal, id: string, now: Date): void {
  const { db } = deps;
  requireUnconfined(principal, "delete devices");
  db.transaction(() => {
    loadDeviceRow(db, principal, id);
    endBinding(deps, principal, id, now, { deleting: true });
    deps.audit.record(principal, principal, "device.delete", [id]);
  })();
}

/** GET /devices/{id}/state: polled every few seconds by every app of a fleet, so its read shares the turn's transaction (decision 076). */
export async function getDeviceState(deps: { db: Database; groupCommit: GroupCommitter }, principal: Principal, id: string): Promise<DeviceState> {
  const { db } = deps;
  const row = await deps.groupCommit.run(() => findDeviceStateRow(db, principal, id));
  return toDeviceState(visible(principal, row, ownerOfDevice, notFound.device(id)));
}

/** Spec 3.1 unbound -> bound: issues the device token, shown only in this response. */
export function bindDevice(db: Database, principal: Principal, id: string, endUserId: string, now: Date): { device: Device; device_token: string } {
  confineToEndUser(principal, endUserId);
  return db.transaction(() => {
    const row = loadDeviceRow(db, principal, id);
    // Bind has always answered not_found (not resource_not_found) for its end user; kept.
    const user = loadEndUser(db, principal, endUserId, { code: "not_found", param: "end_user_id" });
    if (user.deleted_at) throw new ApiError("resource_conflict", `End user ${endUserId} is deleted.`, { param: "end_user_id" });
    if (row.status === "bound") {
      throw new ApiError("resource_conflict", `Device is already bound to ${row.end_user_id}; unbind it first.`);
    }
    updateDeviceFields(db, principal, id, { status: "bound", end_user_id: endUserId, bound_at: now.toISOString() }, now.toISOString());
    const { token } = issueCredential(db, { ...tenantOf(principal), kind: "device", deviceId: id, endUserId, now });
    return { device: getDevice(db, principal, id), device_token: token };
  })();
}

/**
 * A replayed bind returns the stored response (decision 013), but never a device token that
 * stopped working as if it were live: a later unbind revoked it (the binding is undone), or
 * a token refresh replaced it (the binding stands, the device holds the newer token).
 */
export function assertBindTokenLive(db: Database, principal: Principal, id: string, token: string): void {
  const record = deviceTokenRecord(db, id, token);
  if (record && !record.revoked_at) return;
  const row = findDeviceRow(db, principal, id);
  if (record && row?.status === "bound" && row.bound_at === record.created_at) {
    throw new ApiError(
      "resource_conflict",
      `The device token this bind returned was replaced by a token refresh (POST /devices/${id}/token/refresh); the device holds the current one, and the binding still stands.`,
    );
  }
  throw new ApiError(
    "resource_conflict",
    `This bind was undone by a later unbind, and the device token it returned is revoked. To bind the device again, send a new Idempotency-Key.`,
  );
}

/** Spec 3.1 bound -> unbound: the device token is revoked, end_user_id becomes null, open commands are cancelled. */
export function unbindDevice(deps: BindingDeps, principal: Principal, id: string, now: Date): Device {
  const { db } = deps;
  return db.transaction(() => {
    const row = loadDeviceRow(db, principal, id);
    if (row.status !== "bound") throw new ApiError("bad_request", "Device is not bound.");
    endBinding(deps, principal, id, now);
    // Not loadDeviceRow: an end-user-scoped caller no longer sees the device once unbound.
    return presentDevice(db, principal, findDeviceRow(db, principal, id) as DeviceRow);
  })();
}

/**
 * A deleted end user is read-only, so the devices bound to it are released (endBinding),
 * free to be bound to someone else, in the deleting transaction (the endUserDeleted
 * cascade, registered by registerDeviceCascades). Recordings keep their device and end
 * user (the history spec 4.1 keeps).
 */
function releaseDevicesOfEndUser(deps: BindingDeps, tenant: Tenant, endUserId: string, now: Date): number {
  const { db } = deps;
  const ids = db
    .query<{ id: string }, [string, string, string]>(
      "SELECT id FROM devices WHERE project_id = ? AND mode = ? AND end_user_id = ? AND status = 'bound' AND deleted_at IS NULL",
    )
    .all(tenant.projectId, tenant.mode, endUserId)
    .map((r) => r.id);
  for (const id of ids) endBinding(deps, tenant, id, now);
  return ids.length;
}

/** Devices follow end users: registered on every Deps by buildDeps (decision 083). */
export function registerDeviceCascades(deps: BindingDeps): void {
  deps.cascades.on("endUserDeleted", "devices", ({ tenant, endUserId, now }) => void releaseDevicesOfEndUser(deps, tenant, endUserId, now));
}

/** Rotates the calling device token: a new one is returned and every older one stops working. */
export function refreshDeviceToken(deps: CredentialStore, principal: Principal, id: string, now: Date): { device_token: string } {
  const { db } = deps;
  requireOwnDeviceToken(principal, id, "Only a device token can refresh itself; rebind to issue a new one.");
  return db.transaction(() => {
    const row = findDeviceRow(db, principal, id);
    // Authentication ran before this transaction; re-checking inside it keeps two refreshes
    // of one token from both rotating should any async hook ever run in between.
    if (!row || row.status !== "bound" || !row.end_user_id || !deviceTokenIsLive(db, principal.credentialId)) {
      throw new ApiError("unauthorized", "The credential is invalid, expired or revoked.");
    }
    revokeDeviceCredentials(deps, id, now);
    const { token } = issueCredential(db, { ...tenantOf(principal), kind: "device", deviceId: id, endUserId: row.end_user_id, now });
    return { device_token: token };
  })();
}

function tenantOf(principal: Principal): Tenant {
  return { projectId: principal.projectId, mode: principal.mode };
}

const NETWORK_OF_CHANNEL = { wifi: "wifi", cellular: "4g", bluetooth: "ble" } as const;

/** GET /devices/{id}/settings (spec 4.2): the upload, audio and power settings plus what the device last reported. */
export function getDeviceSettingsView(db: Database, principal: Principal, id: string, now: Date): DeviceSettingsView {
  const row = loadDeviceRow(db, principal, id);
  const { upload, audio, power } = presentDevice(db, principal, row).settings;
  const online = isOnline(row.last_heartbeat_at, now);
  return {
    device_id: row.id,
    settings: {
      upload: {
        mode: upload.mode,
        streaming_enabled: upload.streaming_enabled,
        upload_delay_minutes: upload.upload_delay_minutes,
        daily_data_limit_mb: upload.daily_data_limit_mb,
        allow_roaming: upload.allow_roaming,
        pause_on_low_battery: upload.pause_on_low_battery,
        // Always the object 4.2 shows; a window never set reads as disabled with no times.
        off_peak_hours: upload.off_peak_hours ?? { enabled: false, start: null, end: null, timezone: null },
      },
      audio,
      power,
    },
    current_status: {
      network_type: online && row.last_seen_by ? NETWORK_OF_CHANNEL[row.last_seen_by] : "offline",
      signal_strength_dbm: row.signal_strength_dbm,
      // Heartbeats (decisions.md) report neither roaming nor data use, so these stay unknown.
      is_roaming: null,
      data_used_today_mb: null,
      battery_percent: row.battery_percent,
      storage_used_mb: row.storage_used_mb,
      storage_total_mb: row.storage_total_mb,
    },
    updated_at: settingsUpdatedAt(db, principal, row),
  };
}

/**
 * When this device's settings last changed: its row (which also holds its own overrides)
 * or any configuration level above it that applies - organization, project, and the end
 * user it is bound to. A level's change to non-settings keys moves it too: an early
 * "changed" costs a client one refetch, a missed one leaves it with stale settings.
 */
function settingsUpdatedAt(db: Database, tenant: Tenant, row: DeviceRow): string {
  const levels = [
    findOrganizationOverrides(db, organizationOf(db, tenant)),
    findOverrides(db, tenant, "project", tenant.projectId),
    row.end_user_id ? findOverrides(db, tenant, "end_user", row.end_user_id) : null,
  ];
  // ISO-8601 UTC strings of one format: text order is time order.
  return levels.reduce((latest, level) => (level && level.updated_at > latest ? level.updated_at : latest), row.updated_at);
}
