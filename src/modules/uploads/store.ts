import type { Database } from "bun:sqlite";
import type { Tenant } from "../../http/credentials";

/** An issued upload URL: what its up_ token may write. */
export type UploadRow = {
  credential_id: string;
  recording_id: string;
  project_id: string;
  mode: "test" | "live";
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

export function findUpload(db: Database, credentialId: string): UploadRow | null {
  return db.query<UploadRow, [string]>("SELECT * FROM recording_uploads WHERE credential_id = ?").get(credentialId);
}

export function markUploadReceived(db: Database, credentialId: string, storageKey: string, size: number, now: Date): void {
  db.query("UPDATE recording_uploads SET storage_key = ?, received_size = ?, received_at = ? WHERE credential_id = ?").run(
    storageKey,
    size,
    now.toISOString(),
    credentialId,
  );
}
