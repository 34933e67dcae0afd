import type { Database } from "bun:sqlite";
import { type Page, type PageRequest, paginate } from "../../http/pagination";
import type { Tenant } from "../../tenancy";

export type ExportFilter = { end_user_id: string | null; created_after: string | null; created_before: string | null };

export type ExportRow = {
  id: string;
  project_id: string;
  mode: "test" | "live";
  status: "processing" | "completed" | "failed" | "deleted" | "expired";
  matter: string | null;
  filter: string;
  recording_ids: string;
  encrypted: number;
  passphrase_sealed: string | null;
  storage_key: string | null;
  sha256: string | null;
  size_bytes: number | null;
  error: string | null;
  created_by: string | null;
  created_at: string;
  completed_at: string | null;
  failed_at: string | null;
  erased_at: string | null;
};

export function insertExport(
  db: Database,
  tenant: Tenant,
  row: Pick<ExportRow, "id" | "matter" | "filter" | "recording_ids" | "encrypted" | "passphrase_sealed" | "created_by" | "created_at">,
): void {
  db.query(
    `INSERT INTO exports (id, project_id, mode, status, matter, filter, recording_ids, encrypted, passphrase_sealed, created_by, created_at)
     VALUES (?, ?, ?, 'processing', ?, ?, ?, ?, ?, ?, ?)`,
  ).run(row.id, tenant.projectId, tenant.mode, row.matter, row.filter, row.recording_ids, row.encrypted, row.passphrase_sealed, row.created_by, row.created_at);
}

export function findExport(db: Database, tenant: Tenant, id: string): ExportRow | null {
  return db
    .query<ExportRow, [string, string, string]>("SELECT * FROM exports WHERE project_id = ? AND mode = ? AND id = ?")
    .get(tenant.projectId, tenant.mode, id);
}

export function listExportRows<T>(db: Database, tenant: Tenant, page: PageRequest, present: (row: ExportRow) => T): Page<T> {
  return paginate<ExportRow, T>(db, { table: "exports", where: ["project_id = ?", "mode = ?"], params: [tenant.projectId, tenant.mode] }, page, present);
}

/** The end of a build: the archive's key, hash and size, and the passphrase forgotten. */
export function completeExport(db: Database, id: string, result: { storage_key: string; sha256: string; size_bytes: number }, at: string): void {
  db.query(
    "UPDATE exports SET status = 'completed', storage_key = ?, sha256 = ?, size_bytes = ?, passphrase_sealed = NULL, completed_at = ? WHERE id = ? AND status = 'processing'",
  ).run(result.storage_key, result.sha256, result.size_bytes, at, id);
}

export function failExport(db: Database, id: string, error: { code: string; message: string }, at: string): void {
  db.query("UPDATE exports SET status = 'failed', error = ?, passphrase_sealed = NULL, failed_at = ? WHERE id = ? AND status = 'processing'").run(
    JSON.stringify(error),
    at,
    id,
  );
}

/** The archive erased (decision 107): `deleted` by DELETE, `expired` by retention; the row stays as the record. */
export function markArchiveErased(db: Database, id: string, status: "deleted" | "expired", at: string): void {
  db.query("UPDATE exports SET status = ?, erased_at = ?, storage_key = NULL WHERE id = ? AND status IN ('completed', 'failed')").run(status, at, id);
}

/** Completed exports, every tenant's, whose archives were built before `cutoff`. */
export function listArchivesCompletedBefore(db: Database, cutoff: string): ExportRow[] {
  return db.query<ExportRow, [string]>("SELECT * FROM exports WHERE status = 'completed' AND completed_at < ? ORDER BY completed_at").all(cutoff);
}
