import type { Database } from "bun:sqlite";
import { decryptWithServerSecret, encryptWithServerSecret } from "../../crypto";
import { mayHoldResetCredential, requireOwnResetCredential } from "../../http/access";
import type { Principal } from "../../http/auth";
import { consumeCredential, type CredentialStore, issueCredential } from "../../http/credentials";
import { ApiError } from "../../http/errors";
import type { Page } from "../../http/pagination";
import { newId } from "../../ids";
import { type BindingDeps, type DeviceRow, endBinding, loadDeviceRow } from "../devices/service";
import type { GrantKeys } from "../grants/signing";
import { type Command, type CreateCommandBody, type ListCommandsQuery, type ResetCompletionBody } from "./schema";
import {
  type CommandRow,
  cancelOpenCommands,
  findCommand,
  findCommandByIdempotencyKey,
  insertCommand,
  listCommandRows,
  openCommands,
  revokeResetCredential,
  transitionCommand,
} from "./store";

/** What other modules (devices and heartbeats) use of the commands store: through this service, never the store itself (decision 083). */
export { openCommands } from "./store";

/** Ordinary command admission (spec 3.2, 8): the last heartbeat must be under 60 s old. */
export const ADMISSION_MAX_AGE_MS = 60_000;
/** A factory reset waits for the device for a day: it is not an ordinary command (decision 022). */
export const RESET_TTL_SECONDS = 86_400;

export type CommandDeps = CredentialStore & { serverSecret: string; grantKeys: GrantKeys };

/** The device a command route names, as the device routes load it, but reported as resource_not_found (spec 4.2 rule 4). */
export function loadCommandDevice(db: Database, principal: Principal, deviceId: string): DeviceRow {
  return loadDeviceRow(db, principal, deviceId, { code: "resource_not_found", param: "id" });
}

function loadCommand(db: Database, principal: Principal, deviceId: string, id: string): CommandRow {
  loadCommandDevice(db, principal, deviceId);
  const row = findCommand(db, principal, deviceId, id);
  if (!row) throw new ApiError("resource_not_found", "Command not found", { param: "cmd_id" });
  return row;
}

/**
 * The API shape. grant_token is computed, never stored: for ordinary commands an Ed25519
 * command grant the device can check when the phone relays it; for factory_reset the rct_
 * completion credential, or null for callers that may not hold it: a restricted key whose
 * only writes are elsewhere (webhooks:write, say) could otherwise complete a reset it was
 * never allowed to start; the rct_ caller itself gets null back, its credential being spent.
 */
export function presentCommand(deps: CommandDeps, principal: Principal, row: CommandRow): Command {
  let grantToken: string | null;
  if (row.type === "factory_reset") {
    grantToken = row.grant_secret && mayHoldResetCredential(principal) ? decryptWithServerSecret(deps.serverSecret, row.grant_secret) : null;
  } else {
    grantToken = deps.grantKeys.sign(principal.organizationId, { typ: "command", cmd: row.id, dev: row.device_id, type: row.type, exp: row.expires_at });
  }
  return {
    id: row.id,
    device_id: row.device_id,
    type: row.type,
    status: row.status,
    params: row.params ? JSON.parse(row.params) : null,
    grant_token: grantToken,
    result: row.result ? JSON.parse(row.result) : null,
    error: row.error ? JSON.parse(row.error) : null,
    expires_at: row.expires_at,
    delivered_at: row.delivered_at,
    executed_at: row.executed_at,
    created_at: row.created_at,
  };
}

function formatAge(ms: number): string {
  const s = Math.floor(ms / 1000);
  if (s < 120) return `${s} seconds`;
  if (s < 7200) return `${Math.floor(s / 60)} minutes`;
  if (s < 172_800) return `${Math.floor(s / 3600)} hours`;
  return `${Math.floor(s / 86_400)} days`;
}

/** Spec 4.2 rule 1: bound, and heard from under 60 s ago; the message names age and channel. */
function admit(device: DeviceRow, now: Date): void {
  if (device.status !== "bound") {
    throw new ApiError("invalid_request", `Device ${device.id} is not bound to an end user; bind it before sending commands.`, { status: 409 });
  }
  if (!device.last_heartbeat_at) {
    throw new ApiError(
      "invalid_request",
      `Device ${device.id} has never sent a heartbeat; commands are accepted only from a device heard from in the last 60 seconds.`,
      { status: 409 },
    );
  }
  const age = now.getTime() - Date.parse(device.last_heartbeat_at);
  if (age >= ADMISSION_MAX_AGE_MS) {
    throw new ApiError(
      "invalid_request",
      `Device ${device.id} is offline: last contact ${formatAge(age)} ago over ${device.last_seen_by ?? "an unknown channel"}. Commands are not queued for offline devices; send it once the device has sent a heartbeat in the last 60 seconds.`,
      { status: 409 },
    );
  }
}

export function isRecording(device: Pick<DeviceRow, "recording_state">): boolean {
  if (!device.recording_state) return false;
  return (JSON.parse(device.recording_state) as { device_state?: unknown }).device_state === "recording";
}

/** POST /devices/{id}/commands. A repeated idempotency_key returns the earlier command (replayed: true). */
export function createCommand(
  deps: CommandDeps,
  principal: Principal,
  deviceId: string,
  body: CreateCommandBody,
  now: Date,
): { command: Command; replayed: boolean } {
  const { db } = deps;
  const { type } = body;
  return db.transaction(() => {
    const device = loadCommandDevice(db, principal, deviceId);
    if (body.idempotency_key) {
      const earlier = findCommandByIdempotencyKey(db, principal, deviceId, body.idempotency_key);
      if (earlier) return { command: presentCommand(deps, principal, earlier), replayed: true };
    }
    admit(device, now);
    if (type === "start_recording" && isRecording(device)) {
      throw new ApiError("resource_already_exists", "The device is already recording.");
    }
    if (type === "stop_recording" && !isRecording(device)) {
      throw new ApiError("resource_already_exists", "The device is not currently recording.");
    }
    const id = newId("cmd_", now.getTime());
    insertCommand(db, principal, {
      id,
      device_id: deviceId,
      type,
      params: body.params ? JSON.stringify(body.params) : null,
      idempotency_key: body.idempotency_key ?? null,
      grant_secret: null,
      expires_at: new Date(now.getTime() + body.ttl_seconds * 1000).toISOString(),
      created_at: now.toISOString(),
    });
    return { command: presentCommand(deps, principal, findCommand(db, principal, deviceId, id) as CommandRow), replayed: false };
  })();
}

/**
 * POST /devices/{id}/reset: a factory_reset command with its rct_ completion credential,
 * valid until the command expires. Needs a bound device, not a fresh heartbeat: the reset
 * waits up to RESET_TTL_SECONDS for the device to call in.
 */
export function createResetCommand(deps: CommandDeps, principal: Principal, deviceId: string, now: Date): Command {
  const { db } = deps;
  return db.transaction(() => {
    const device = loadCommandDevice(db, principal, deviceId);
    if (device.status !== "bound") {
      throw new ApiError("invalid_request", `Device ${device.id} is not bound; an unbound device holds no data to reset.`, { status: 409 });
    }
    const open = openCommands(db, principal, deviceId).find((c) => c.type === "factory_reset");
    if (open) throw new ApiError("resource_conflict", `A factory reset (${open.id}) is already in flight for this device; cancel it first.`);
    const id = newId("cmd_", now.getTime());
    const expiresAt = new Date(now.getTime() + RESET_TTL_SECONDS * 1000);
    const { token } = issueCredential(db, { projectId: principal.projectId, mode: principal.mode, kind: "reset", deviceId, commandId: id, expiresAt, now });
    insertCommand(db, principal, {
      id,
      device_id: deviceId,
      type: "factory_reset",
      params: null,
      idempotency_key: null,
      grant_secret: encryptWithServerSecret(deps.serverSecret, token),
      expires_at: expiresAt.toISOString(),
      created_at: now.toISOString(),
    });
    return presentCommand(deps, principal, findCommand(db, principal, deviceId, id) as CommandRow);
  })();
}

/**
 * POST /devices/{id}/commands/{cmd_id}/complete with `Authorization: Bearer rct_...`: the
 * one call an rct_ credential can make, once, for its own command. An executed reset
 * unbinds the device (its token was wiped with everything else) and cancels what else was queued.
 */
export function completeReset(
  deps: CommandDeps & BindingDeps,
  principal: Principal,
  deviceId: string,
  commandId: string,
  body: ResetCompletionBody,
  now: Date,
): Command {
  const { db } = deps;
  requireOwnResetCredential(principal, deviceId, commandId);
  return db.transaction(() => {
    const row = findCommand(db, principal, deviceId, commandId);
    if (!row) throw new ApiError("resource_not_found", "Command not found", { param: "cmd_id" });
    if (!consumeCredential(deps, principal.credentialId, now)) throw new ApiError("resource_conflict", "This factory reset was already acknowledged.");
    const at = now.toISOString();
    const fields =
      body.status === "executed"
        ? { result: JSON.stringify(body.result ?? {}), executed_at: at }
        : { error: JSON.stringify(body.error ?? { code: "reset_failed", message: "The device reported a failed factory reset." }), executed_at: at };
    if (!transitionCommand(db, principal, commandId, ["pending", "delivered"], body.status, fields)) {
      throw new ApiError("resource_conflict", `The factory reset is already ${row.status}.`);
    }
    // The wiped device forgot its token and everything queued for its wearer.
    if (body.status === "executed") endBinding(deps, principal, deviceId, now);
    return presentCommand(deps, principal, findCommand(db, principal, deviceId, commandId) as CommandRow);
  })();
}

export function getCommand(deps: CommandDeps, principal: Principal, deviceId: string, id: string): Command {
  return presentCommand(deps, principal, loadCommand(deps.db, principal, deviceId, id));
}

export function listCommands(deps: CommandDeps, principal: Principal, deviceId: string, query: ListCommandsQuery): Page<Command> {
  loadCommandDevice(deps.db, principal, deviceId);
  const page = listCommandRows(deps.db, principal, deviceId, query.status, { limit: query.limit, cursor: query.cursor });
  return { ...page, data: page.data.map((row) => presentCommand(deps, principal, row)) };
}

/** Spec 3.2 "cancellation through the API": from pending or delivered; a finished command is 409. */
export function cancelCommand(deps: CommandDeps, principal: Principal, deviceId: string, id: string, now: Date): Command {
  const { db } = deps;
  return db.transaction(() => {
    const row = loadCommand(db, principal, deviceId, id);
    if (!transitionCommand(db, principal, id, ["pending", "delivered"], "cancelled", { cancelled_at: now.toISOString() })) {
      throw new ApiError("resource_conflict", `Command is already ${row.status}; only pending or delivered commands can be cancelled.`);
    }
    if (row.type === "factory_reset") {
      revokeResetCredential(deps, id, now.toISOString());
    }
    return presentCommand(deps, principal, findCommand(db, principal, deviceId, id) as CommandRow);
  })();
}

/** Commands follow a device's binding (cancelOpenCommands): registered on every Deps by buildDeps (decision 083). */
export function registerCommandCascades(deps: CredentialStore & Pick<BindingDeps, "cascades">): void {
  deps.cascades.on("bindingEnded", "commands", ({ tenant, deviceId, now }) => void cancelOpenCommands(deps, tenant, deviceId, now.toISOString()));
}
