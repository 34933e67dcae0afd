import type { Database } from "bun:sqlite";
import { newId } from "../../ids";
import type { Tenant } from "../../tenancy";

export type GrantRow = {
  id: string;
  end_user_id: string;
  admin_id: string;
  admin_email: string;
  reason: string;
  opened_at: string;
  expires_at: string;
  closed_at: string | null;
  closed_by: string | null;
};

const COLUMNS = "id, end_user_id, admin_id, admin_email, reason, opened_at, expires_at, closed_at, closed_by";

export function insertGrant(
  db: Database,
  tenant: Tenant,
  grant: { endUserId: string; adminId: string; adminEmail: string; reason: string; expiresAt: Date },
  now: Date,
): GrantRow {
  const row: GrantRow = {
    id: newId("bg_", now.getTime()),
    end_user_id: grant.endUserId,
    admin_id: grant.adminId,
    admin_email: grant.adminEmail,
    reason: grant.reason,
    opened_at: now.toISOString(),
    expires_at: grant.expiresAt.toISOString(),
    closed_at: null,
    closed_by: null,
  };
  db.query(
    `INSERT INTO break_glass_grants (id, project_id, mode, end_user_id, admin_id, admin_email, reason, opened_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(row.id, tenant.projectId, tenant.mode, row.end_user_id, row.admin_id, row.admin_email, row.reason, row.opened_at, row.expires_at);
  return row;
}

export function findGrant(db: Database, tenant: Tenant, id: string): GrantRow | null {
  return db
    .query<GrantRow, [string, string, string]>(`SELECT ${COLUMNS} FROM break_glass_grants WHERE id = ? AND project_id = ? AND mode = ?`)
    .get(id, tenant.projectId, tenant.mode);
}

/** The tenant's most recent grants, newest first. */
export function listGrants(db: Database, tenant: Tenant, limit: number): GrantRow[] {
  return db
    .query<GrantRow, [string, string, number]>(
      `SELECT ${COLUMNS} FROM break_glass_grants WHERE project_id = ? AND mode = ? ORDER BY opened_at DESC, id DESC LIMIT ?`,
    )
    .all(tenant.projectId, tenant.mode, limit);
}

/** One person's grants in a tenant that are neither closed nor expired at `now`. */
export function openGrantsOf(db: Database, adminId: string, tenant: Tenant, now: Date): GrantRow[] {
  return db
    .query<GrantRow, [string, string, string, string]>(
      `SELECT ${COLUMNS} FROM break_glass_grants
        WHERE admin_id = ? AND project_id = ? AND mode = ? AND closed_at IS NULL AND expires_at > ?
        ORDER BY opened_at, id`,
    )
    .all(adminId, tenant.projectId, tenant.mode, now.toISOString());
}

/** Closes a grant still open at `now`; false when it was already closed or expired. */
export function closeGrant(db: Database, id: string, closedBy: string, now: Date): boolean {
  const at = now.toISOString();
  return (
    db.query("UPDATE break_glass_grants SET closed_at = ?, closed_by = ? WHERE id = ? AND closed_at IS NULL AND expires_at > ?").run(at, closedBy, id, at)
      .changes > 0
  );
}
