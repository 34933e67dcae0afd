import type { Database } from "bun:sqlite";
import type { Tenant } from "../../tenancy";
import type { FoundIdentifier } from "./detect";

/** The language model's pass over one transcription (decision 108). */
export type LlmPass = { status: "completed" | "failed"; model: string; identifiers: FoundIdentifier[]; error: string | null; created_at: string };

type Row = Omit<LlmPass, "identifiers"> & { identifiers: string };

export function findLlmPass(db: Database, tenant: Tenant, transcriptionId: string): LlmPass | null {
  const row = db
    .query<Row, [string, string, string]>(
      "SELECT status, model, identifiers, error, created_at FROM redaction_passes WHERE transcription_id = ? AND project_id = ? AND mode = ?",
    )
    .get(transcriptionId, tenant.projectId, tenant.mode);
  return row ? { ...row, identifiers: JSON.parse(row.identifiers) } : null;
}

/** Stores a pass once: a second run of the job (after a crash) keeps the first. Whether it inserted. */
export function insertLlmPass(db: Database, tenant: Tenant, transcriptionId: string, pass: LlmPass): boolean {
  return (
    db
      .query(
        "INSERT INTO redaction_passes (transcription_id, project_id, mode, status, model, identifiers, error, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
      )
      .run(transcriptionId, tenant.projectId, tenant.mode, pass.status, pass.model, JSON.stringify(pass.identifiers), pass.error, pass.created_at).changes > 0
  );
}
