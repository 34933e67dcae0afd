import type { Database } from "bun:sqlite";
import { newId } from "../../ids";

export type Organization = { id: string; name: string; plan: "standard" | "enterprise"; created_at: string };
export type Project = { id: string; organization_id: string; name: string; created_at: string };

export const DEFAULT_ORGANIZATION = "default";

/** The organization every project belongs to; created on first start. */
export function ensureDefaultOrganization(db: Database, now: Date): Organization {
  db.query("INSERT INTO organizations (id, name, created_at) VALUES (?, ?, ?) ON CONFLICT(name) DO NOTHING").run(
    newId("org_", now.getTime()),
    DEFAULT_ORGANIZATION,
    now.toISOString(),
  );
  return db.query<Organization, [string]>("SELECT * FROM organizations WHERE name = ?").get(DEFAULT_ORGANIZATION)!;
}

export function findProjectByName(db: Database, name: string): Project | null {
  return db.query<Project, [string]>("SELECT * FROM projects WHERE name = ?").get(name);
}

export function listProjects(db: Database): Project[] {
  return db.query<Project, []>("SELECT * FROM projects ORDER BY created_at").all();
}

export function insertProject(db: Database, organizationId: string, name: string, now: Date): Project {
  const project: Project = { id: newId("proj_", now.getTime()), organization_id: organizationId, name, created_at: now.toISOString() };
  db.query("INSERT INTO projects (id, organization_id, name, created_at) VALUES (?, ?, ?, ?)").run(project.id, organizationId, name, project.created_at);
  return project;
}

export function setOrganizationPlan(db: Database, organizationId: string, plan: Organization["plan"]): void {
  db.query("UPDATE organizations SET plan = ? WHERE id = ?").run(plan, organizationId);
}

export function getOrganization(db: Database, id: string): Organization | null {
  return db.query<Organization, [string]>("SELECT * FROM organizations WHERE id = ?").get(id);
}

/** Deletes the project's row; the migration-0019 trigger and data_keys' cascade take its remaining rows and its data key. */
export function deleteProjectRow(db: Database, id: string): void {
  db.query("DELETE FROM projects WHERE id = ?").run(id);
}
