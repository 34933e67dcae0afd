import type { Database } from "bun:sqlite";
import type { Mode, Tenant } from "../../tenancy";
import { recordingPrefix } from "./objects";

/** An issued upload URL: what its up_ token may write. */
export type UploadRow = {
  credential_id: string;
  recording_id: string;
  project_id: string;
  mode: Mode;
  chunk_index: number | null;
  content_type: string | null;
  declared_size: number | null;
  storage_key: string | null;
  received_size: number | null;
  received_at: string | null;
  created_at: string;
};

export function insertUpload(
  db: Database,
  tenant: Tenant,
  u: { credentialId: string; recordingId: string; chunkIndex: number | null; contentType: string | null; declaredSize: number | null },
  now: Date,
): void {
  db.query(
    `INSERT INTO recording_uploads (credential_id, recording_id, project_id, mode, chunk_index, content_type, declared_size, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(u.credentialId, u.recordingId, tenant.projectId, tenant.mode, u.chunkIndex, u.contentType, u.declaredSize, now.toISOString());
}

export function findUpload(db: Database, tenant: Tenant, credentialId: string): UploadRow | null {
  return db
    .query<UploadRow, [string, string, string]>("SELECT * FROM recording_uploads WHERE credential_id = ? AND project_id = ? AND mode = ?")
    .get(credentialId, tenant.projectId, tenant.mode);
}

export function markUploadReceived(db: Database, tenant: Tenant, credentialId: string, storageKey: string, size: number, now: Date): void {
  db.query("UPDATE recording_uploads SET storage_key = ?, received_size = ?, received_at = ? WHERE credential_id = ? AND project_id = ? AND mode = ?").run(
    storageKey,
    size,
    now.toISOString(),
    credentialId,
    tenant.projectId,
    tenant.mode,
  );
}

/** Where the PUT of an upload URL stores its bytes: one object per URL (decision 031). */
export function uploadObjectKey(u: Pick<UploadRow, "credential_id" | "recording_id" | "project_id" | "mode" | "chunk_index">): string {
  const name = u.chunk_index === null ? `upload-${u.credential_id}` : `chunk-${String(u.chunk_index).padStart(6, "0")}-${u.credential_id}`;
  return `${recordingPrefix({ projectId: u.project_id, mode: u.mode }, u.recording_id)}${name}`;
}

/** Upload URLs that expired before any bytes were recorded for them, oldest first, across tenants (a maintenance sweep). */
export function listUnreceivedUploads(db: Database, createdBefore: Date, limit: number): UploadRow[] {
  return db
    .query<UploadRow, [string, number]>("SELECT * FROM recording_uploads WHERE received_at IS NULL AND created_at < ? ORDER BY created_at LIMIT ?")
    .all(createdBefore.toISOString(), limit);
}

export function deleteUpload(db: Database, credentialId: string): void {
  db.query("DELETE FROM recording_uploads WHERE credential_id = ?").run(credentialId);
}
