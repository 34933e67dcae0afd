import type { Database } from "bun:sqlite";
import { type CredentialStore, revokeCredentials } from "../../http/credentials";
import type { Tenant } from "../../tenancy";
import { type Page, type PageRequest, paginate } from "../../http/pagination";
import type { CommandStatus, CommandType } from "./schema";

/** A device_commands row as stored: JSON columns still text. */
export type CommandRow = {
  id: string;
  project_id: string;
  mode: string;
  device_id: string;
  type: CommandType;
  status: CommandStatus;
  params: string | null;
  idempotency_key: string | null;
  grant_secret: string | null;
  result: string | null;
  error: string | null;
  expires_at: string | null;
  delivered_at: string | null;
  executed_at: string | null;
  cancelled_at: string | null;
  created_at: string;
};

export type NewCommand = Pick<CommandRow, "id" | "device_id" | "type" | "params" | "idempotency_key" | "grant_secret" | "expires_at" | "created_at">;

export function insertCommand(db: Database, tenant: Tenant, c: NewCommand): void {
  db.query(
    `INSERT INTO device_commands (id, project_id, mode, device_id, type, status, params, idempotency_key, grant_secret, expires_at, created_at)
     VALUES (?, ?, ?, ?, ?, 'pending', ?, ?, ?, ?, ?)`,
  ).run(c.id, tenant.projectId, tenant.mode, c.device_id, c.type, c.params, c.idempotency_key, c.grant_secret, c.expires_at, c.created_at);
}

export function findCommand(db: Database, tenant: Tenant, deviceId: string, id: string): CommandRow | null {
  return db
    .query<CommandRow, [string, string, string, string]>("SELECT * FROM device_commands WHERE id = ? AND device_id = ? AND project_id = ? AND mode = ?")
    .get(id, deviceId, tenant.projectId, tenant.mode);
}

export function findCommandByIdempotencyKey(db: Database, tenant: Tenant, deviceId: string, key: string): CommandRow | null {
  return db
    .query<CommandRow, [string, string, string, string]>(
      "SELECT * FROM device_commands WHERE idempotency_key = ? AND device_id = ? AND project_id = ? AND mode = ?",
    )
    .get(key, deviceId, tenant.projectId, tenant.mode);
}

export function listCommandRows(db: Database, tenant: Tenant, deviceId: string, status: CommandStatus | undefined, page: PageRequest): Page<CommandRow> {
  const where = ["project_id = ?", "mode = ?", "device_id = ?"];
  const params = [tenant.projectId, tenant.mode, deviceId];
  if (status) {
    where.push("status = ?");
    params.push(status);
  }
  return paginate<CommandRow, CommandRow>(db, { table: "device_commands", where, params }, page, (row) => row);
}

/**
 * A device's pending and delivered commands, oldest first (delivery order). Sorted here,
 * not by SQL: an ORDER BY costs a sorter even for the usual zero rows, and this query
 * runs on every heartbeat (measured 20 us against 4 us).
 */
export function openCommands(db: Database, tenant: Tenant, deviceId: string): CommandRow[] {
  return db
    .query<CommandRow, [string, string, string]>(
      "SELECT * FROM device_commands WHERE device_id = ? AND status IN ('pending', 'delivered') AND project_id = ? AND mode = ?",
    )
    .all(deviceId, tenant.projectId, tenant.mode)
    .sort((a, b) => (a.created_at === b.created_at ? (a.id < b.id ? -1 : 1) : a.created_at < b.created_at ? -1 : 1));
}

/**
 * Moves a command from one of `from` to `to`, setting the given columns. Returns false
 * when it was no longer in `from` (a concurrent heartbeat, cancel or expiry won).
 */
export function transitionCommand(
  db: Database,
  tenant: Tenant,
  id: string,
  from: readonly CommandStatus[],
  to: CommandStatus,
  fields: Partial<Pick<CommandRow, "result" | "error" | "delivered_at" | "executed_at" | "cancelled_at">> = {},
): boolean {
  const entries = Object.entries(fields);
  const sets = ["status = ?", ...entries.map(([k]) => `${k} = ?`)].join(", ");
  return (
    db
      .query(`UPDATE device_commands SET ${sets} WHERE id = ? AND project_id = ? AND mode = ? AND status IN (${from.map(() => "?").join(", ")})`)
      .run(to, ...entries.map(([, v]) => v ?? null), id, tenant.projectId, tenant.mode, ...from).changes === 1
  );
}

/** Every project's pending or delivered commands whose time-to-live has elapsed: expired. */
export function expireDueCommands(db: Database, now: string): number {
  return db.query("UPDATE device_commands SET status = 'expired' WHERE status IN ('pending', 'delivered') AND expires_at <= ?").run(now).changes;
}

/**
 * A device's binding ended (unbind, end-user deletion, device deletion, executed reset):
 * its open commands become cancelled and the rct_ of an open reset is revoked, so nothing
 * queued for one wearer reaches the next. An acknowledged reset's rct_ is left as it is
 * (used), so a device resending its acknowledgement still learns 409, not 401.
 */
export function cancelOpenCommands(store: CredentialStore, tenant: Tenant, deviceId: string, now: string): number {
  const { db } = store;
  const open = db.query<{ id: string }, [string]>("SELECT id FROM device_commands WHERE device_id = ? AND status IN ('pending', 'delivered')").all(deviceId);
  revokeCredentials(store, { kinds: ["reset"], deviceId, commandIds: open.map((c) => c.id) }, new Date(now));
  return db
    .query(
      "UPDATE device_commands SET status = 'cancelled', cancelled_at = ? WHERE device_id = ? AND status IN ('pending', 'delivered') AND project_id = ? AND mode = ?",
    )
    .run(now, deviceId, tenant.projectId, tenant.mode).changes;
}

/** A cancelled factory reset's rct_ credential stops working with it. */
export function revokeResetCredential(store: CredentialStore, commandId: string, now: string): void {
  revokeCredentials(store, { kinds: ["reset"], commandIds: [commandId] }, new Date(now));
}
