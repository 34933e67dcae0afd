import type { Database } from "bun:sqlite";
import type { Tenant } from "../../tenancy";
import type { CommandResult } from "./schema";
import { type CommandRow, expireDueCommands, findCommand, transitionCommand } from "./store";

/**
 * How long after delivery a start/stop command may disagree with the device's reported
 * recording_state before it counts as failed (decision 023): long enough for a heartbeat
 * cycle over a slow relay, short against the 300 s default time-to-live.
 */
export const RECONCILE_GRACE_MS = 30_000;

/**
 * Heartbeat command_results: delivered -> executed | failed (spec 3.2). Results for
 * unknown, foreign or already-finished commands are ignored, so a device may resend them
 * after a lost response. factory_reset is acknowledged only with its rct_ credential.
 */
export function applyCommandResults(db: Database, tenant: Tenant, deviceId: string, results: readonly CommandResult[], now: Date): void {
  const at = now.toISOString();
  for (const r of results) {
    const row = findCommand(db, tenant, deviceId, r.command_id);
    if (!row || row.type === "factory_reset") continue;
    const fields =
      r.status === "executed"
        ? { result: JSON.stringify(r.result ?? {}), executed_at: at }
        : { error: JSON.stringify(r.error ?? { code: "command_failed", message: "The device reported the command as failed." }), executed_at: at };
    transitionCommand(db, tenant, row.id, ["delivered"], r.status, fields);
  }
}

/**
 * Spec 3.2 reconciliation: a delivered start/stop whose effect shows in a later
 * recording_state is executed; one still contradicted once the grace period has passed
 * since delivery is failed. Commands delivered by this same heartbeat are not judged by it.
 */
export function reconcileRecordingCommands(db: Database, tenant: Tenant, open: readonly CommandRow[], deviceState: unknown, now: Date): void {
  if (typeof deviceState !== "string") return;
  const at = now.toISOString();
  for (const row of open) {
    if (row.status !== "delivered" || (row.type !== "start_recording" && row.type !== "stop_recording")) continue;
    if (!row.delivered_at || row.delivered_at >= at) continue;
    const wantsRecording = row.type === "start_recording";
    if ((deviceState === "recording") === wantsRecording) {
      transitionCommand(db, tenant, row.id, ["delivered"], "executed", {
        result: JSON.stringify({ reconciled: true, device_state: deviceState }),
        executed_at: at,
      });
    } else if (now.getTime() - Date.parse(row.delivered_at) >= RECONCILE_GRACE_MS) {
      const error = {
        code: "state_mismatch",
        message: `The device reported device_state ${deviceState} ${Math.round((now.getTime() - Date.parse(row.delivered_at)) / 1000)} seconds after ${row.type} was delivered.`,
      };
      transitionCommand(db, tenant, row.id, ["delivered"], "failed", { error: JSON.stringify(error), executed_at: at });
    }
  }
}

/** Selects every unexpired pending command of `open` for this heartbeat's response: pending -> delivered, oldest first. */
export function deliverPendingCommands(db: Database, tenant: Tenant, open: readonly CommandRow[], now: Date): CommandRow[] {
  const at = now.toISOString();
  const delivered: CommandRow[] = [];
  for (const row of open) {
    if (row.status !== "pending" || (row.expires_at && row.expires_at <= at)) continue; // the expiry sweep will mark expired ones
    if (transitionCommand(db, tenant, row.id, ["pending"], "delivered", { delivered_at: at })) {
      delivered.push({ ...row, status: "delivered", delivered_at: at });
    }
  }
  return delivered;
}

/** The periodic sweep: pending or delivered commands past expires_at become expired. */
export function expireCommands(db: Database, now: Date): number {
  return expireDueCommands(db, now.toISOString());
}
