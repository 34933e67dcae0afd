import type { Database, SQLQueryBindings } from "bun:sqlite";
import type { Tenant } from "../../tenancy";
import { type Page, type PageRequest, paginate } from "../../http/pagination";
import type { EndUser } from "./schema";

type EndUserRow = Omit<EndUser, "metadata"> & { metadata: string; project_id: string; mode: string };

function toEndUser(row: EndUserRow): EndUser {
  return {
    id: row.id,
    external_id: row.external_id,
    name: row.name,
    email: row.email,
    metadata: JSON.parse(row.metadata),
    created_at: row.created_at,
    updated_at: row.updated_at,
    deleted_at: row.deleted_at,
  };
}

export function insertEndUser(db: Database, tenant: Tenant, user: EndUser): void {
  db.query(
    `INSERT INTO end_users (id, project_id, mode, external_id, name, email, metadata, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(user.id, tenant.projectId, tenant.mode, user.external_id, user.name, user.email, JSON.stringify(user.metadata), user.created_at, user.updated_at);
}

export function findEndUser(db: Database, tenant: Tenant, id: string): EndUser | null {
  const row = db
    .query<EndUserRow, [string, string, string]>("SELECT * FROM end_users WHERE id = ? AND project_id = ? AND mode = ?")
    .get(id, tenant.projectId, tenant.mode);
  return row ? toEndUser(row) : null;
}

/** The live end user holding an external_id, if any. */
export function findEndUserByExternalId(db: Database, tenant: Tenant, externalId: string): EndUser | null {
  const row = db
    .query<EndUserRow, [string, string, string]>("SELECT * FROM end_users WHERE external_id = ? AND project_id = ? AND mode = ? AND deleted_at IS NULL")
    .get(externalId, tenant.projectId, tenant.mode);
  return row ? toEndUser(row) : null;
}

export function updateEndUserRow(db: Database, tenant: Tenant, user: EndUser): void {
  db.query("UPDATE end_users SET external_id = ?, name = ?, email = ?, metadata = ?, updated_at = ? WHERE id = ? AND project_id = ? AND mode = ?").run(
    user.external_id,
    user.name,
    user.email,
    JSON.stringify(user.metadata),
    user.updated_at,
    user.id,
    tenant.projectId,
    tenant.mode,
  );
}

/** Marks the end user deleted and erases its personal fields; the row stays, for the recordings that name it. */
export function markEndUserDeleted(db: Database, tenant: Tenant, id: string, now: string): void {
  db.query(
    `UPDATE end_users SET deleted_at = ?, updated_at = ?, external_id = NULL, name = NULL, email = NULL, metadata = '{}'
     WHERE id = ? AND project_id = ? AND mode = ?`,
  ).run(now, now, id, tenant.projectId, tenant.mode);
}

export type EndUserFilter = { externalId?: string; includeDeleted: boolean; onlyId?: string | null };

export function listEndUserRows(db: Database, tenant: Tenant, filter: EndUserFilter, page: PageRequest): Page<EndUser> {
  const where = ["project_id = ?", "mode = ?"];
  const params: SQLQueryBindings[] = [tenant.projectId, tenant.mode];
  if (!filter.includeDeleted) where.push("deleted_at IS NULL");
  if (filter.externalId !== undefined) {
    where.push("external_id = ?");
    params.push(filter.externalId);
  }
  if (filter.onlyId) {
    where.push("id = ?");
    params.push(filter.onlyId);
  }
  return paginate<EndUserRow, EndUser>(db, { table: "end_users", where, params }, page, toEndUser);
}
