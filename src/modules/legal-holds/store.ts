import type { Database, SQLQueryBindings } from "bun:sqlite";
import { type Page, type PageRequest, paginate } from "../../http/pagination";
import type { Tenant } from "../../tenancy";
import type { LegalHold } from "./schema";

export type LegalHoldRow = {
  id: string;
  project_id: string;
  mode: string;
  matter: string;
  note: string | null;
  end_user_id: string | null;
  device_id: string | null;
  recording_id: string | null;
  recording_end_user_id: string | null;
  recording_device_id: string | null;
  created_by: string | null;
  created_at: string;
  released_at: string | null;
  released_by: string | null;
};

export function toLegalHold(row: LegalHoldRow): LegalHold {
  return {
    id: row.id,
    matter: row.matter,
    note: row.note,
    end_user_id: row.end_user_id,
    device_id: row.device_id,
    recording_id: row.recording_id,
    status: row.released_at ? "released" : "active",
    created_at: row.created_at,
    released_at: row.released_at,
  };
}

export function insertLegalHold(db: Database, tenant: Tenant, row: Omit<LegalHoldRow, "project_id" | "mode" | "released_at" | "released_by">): void {
  db.query(
    `INSERT INTO legal_holds (id, project_id, mode, matter, note, end_user_id, device_id, recording_id, recording_end_user_id, recording_device_id, created_by, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    row.id,
    tenant.projectId,
    tenant.mode,
    row.matter,
    row.note,
    row.end_user_id,
    row.device_id,
    row.recording_id,
    row.recording_end_user_id,
    row.recording_device_id,
    row.created_by,
    row.created_at,
  );
}

export function findLegalHold(db: Database, tenant: Tenant, id: string): LegalHoldRow | null {
  return db
    .query<LegalHoldRow, [string, string, string]>("SELECT * FROM legal_holds WHERE project_id = ? AND mode = ? AND id = ?")
    .get(tenant.projectId, tenant.mode, id);
}

export function markReleased(db: Database, tenant: Tenant, id: string, at: string, by: string | null): void {
  db.query("UPDATE legal_holds SET released_at = ?, released_by = ? WHERE project_id = ? AND mode = ? AND id = ? AND released_at IS NULL").run(
    at,
    by,
    tenant.projectId,
    tenant.mode,
    id,
  );
}

export function listLegalHoldRows(db: Database, tenant: Tenant, status: "active" | "released" | undefined, page: PageRequest): Page<LegalHold> {
  const where = ["project_id = ?", "mode = ?"];
  const params: SQLQueryBindings[] = [tenant.projectId, tenant.mode];
  if (status) where.push(status === "active" ? "released_at IS NULL" : "released_at IS NOT NULL");
  return paginate(db, { table: "legal_holds", where, params }, page, toLegalHold);
}

/** What a deletion would remove, and so what an active hold on it forbids. */
export type HoldScope = { recording: { id: string; end_user_id: string | null; device_id: string | null } } | { endUserId: string } | { deviceId: string };

/**
 * The oldest active hold covering `scope`: a recording is covered by a hold on itself, its
 * end user or its device; an end user or a device by a hold on it or on one of its recordings.
 */
export function activeHoldCovering(db: Database, tenant: Tenant, scope: HoldScope): LegalHoldRow | null {
  let condition: string;
  let params: SQLQueryBindings[];
  if ("recording" in scope) {
    const r = scope.recording;
    condition = "(recording_id = ? OR end_user_id = ? OR device_id = ?)";
    params = [r.id, r.end_user_id, r.device_id];
  } else if ("endUserId" in scope) {
    condition = "(end_user_id = ?1 OR recording_end_user_id = ?1)";
    params = [scope.endUserId];
  } else {
    condition = "(device_id = ?1 OR recording_device_id = ?1)";
    params = [scope.deviceId];
  }
  // Numbered parameters after the condition's: ?1 is reused above, so the tenant takes explicit numbers.
  const n = params.length;
  return db
    .query<LegalHoldRow, SQLQueryBindings[]>(
      `SELECT * FROM legal_holds WHERE ${condition} AND project_id = ?${n + 1} AND mode = ?${n + 2} AND released_at IS NULL ORDER BY created_at, id LIMIT 1`,
    )
    .get(...params, tenant.projectId, tenant.mode);
}

/** The active holds of a project, both modes, oldest first: deleting the project is refused while there are any. */
export function listActiveHoldsOfProject(db: Database, projectId: string): LegalHoldRow[] {
  return db.query<LegalHoldRow, [string]>("SELECT * FROM legal_holds WHERE project_id = ? AND released_at IS NULL ORDER BY created_at, id").all(projectId);
}
