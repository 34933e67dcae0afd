import type { Database } from "bun:sqlite";
import type { Tenant } from "../../tenancy";
import type { ConfigOverrides } from "./schema";

export type StoredOverrides = { overrides: ConfigOverrides; updated_at: string };
export type TenantLevel = "project" | "end_user" | "device";

type Row = { overrides: string; updated_at: string };
const parse = (row: Row | null): StoredOverrides | null => (row ? { overrides: JSON.parse(row.overrides), updated_at: row.updated_at } : null);

export function organizationOf(db: Database, tenant: Tenant): string {
  const row = db.query<{ organization_id: string }, [string]>("SELECT organization_id FROM projects WHERE id = ?").get(tenant.projectId);
  if (!row) throw new Error(`project ${tenant.projectId} has no organization`);
  return row.organization_id;
}

export function findOrganizationOverrides(db: Database, organizationId: string): StoredOverrides | null {
  return parse(db.query<Row, [string]>("SELECT overrides, updated_at FROM organization_config WHERE organization_id = ?").get(organizationId));
}

export function saveOrganizationOverrides(db: Database, organizationId: string, overrides: ConfigOverrides, now: string): void {
  db.query(
    `INSERT INTO organization_config (organization_id, overrides, updated_at) VALUES (?, ?, ?)
     ON CONFLICT (organization_id) DO UPDATE SET overrides = excluded.overrides, updated_at = excluded.updated_at`,
  ).run(organizationId, JSON.stringify(overrides), now);
}

export function deleteOrganizationOverrides(db: Database, organizationId: string): void {
  db.query("DELETE FROM organization_config WHERE organization_id = ?").run(organizationId);
}

export function findOverrides(db: Database, tenant: Tenant, level: TenantLevel, targetId: string): StoredOverrides | null {
  return parse(
    db
      .query<Row, [string, string, string, string]>(
        "SELECT overrides, updated_at FROM config_overrides WHERE project_id = ? AND mode = ? AND level = ? AND target_id = ?",
      )
      .get(tenant.projectId, tenant.mode, level, targetId),
  );
}

export function saveOverrides(db: Database, tenant: Tenant, level: TenantLevel, targetId: string, overrides: ConfigOverrides, now: string): void {
  db.query(
    `INSERT INTO config_overrides (project_id, mode, level, target_id, overrides, updated_at) VALUES (?, ?, ?, ?, ?, ?)
     ON CONFLICT (project_id, mode, level, target_id) DO UPDATE SET overrides = excluded.overrides, updated_at = excluded.updated_at`,
  ).run(tenant.projectId, tenant.mode, level, targetId, JSON.stringify(overrides), now);
}

export function deleteOverrides(db: Database, tenant: Tenant, level: TenantLevel, targetId: string): void {
  db.query("DELETE FROM config_overrides WHERE project_id = ? AND mode = ? AND level = ? AND target_id = ?").run(
    tenant.projectId,
    tenant.mode,
    level,
    targetId,
  );
}
