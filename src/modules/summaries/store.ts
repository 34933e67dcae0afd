import type { Database, SQLQueryBindings } from "bun:sqlite";
import type { Tenant } from "../../tenancy";
import { type Page, type PageRequest, paginate } from "../../http/pagination";
import type { Summary, SummarySection } from "./schema";

type SummaryRow = Omit<Summary, "structured" | "sections" | "error"> & {
  project_id: string;
  mode: string;
  end_user_id: string | null;
  run: number;
  structured: string | null;
  sections: string | null;
  error: string | null;
};

export type StoredSummary = { record: Summary; endUserId: string | null; run: number };

function toStored(row: SummaryRow): StoredSummary {
  return {
    record: {
      id: row.id,
      transcription_id: row.transcription_id,
      recording_id: row.recording_id,
      status: row.status,
      template: row.template,
      format: row.format,
      text: row.text,
      structured: row.structured ? JSON.parse(row.structured) : null,
      sections: row.sections ? JSON.parse(row.sections) : null,
      error: row.error ? JSON.parse(row.error) : null,
      model: row.model,
      prompt_version: row.prompt_version,
      created_at: row.created_at,
      started_at: row.started_at,
      completed_at: row.completed_at,
      failed_at: row.failed_at,
    },
    endUserId: row.end_user_id,
    run: row.run,
  };
}

export function findStoredSummary(db: Database, tenant: Tenant, id: string): StoredSummary | null {
  const row = db
    .query<SummaryRow, [string, string, string]>("SELECT * FROM summaries WHERE id = ? AND project_id = ? AND mode = ?")
    .get(id, tenant.projectId, tenant.mode);
  return row ? toStored(row) : null;
}

export function findSummaryByTemplate(db: Database, tenant: Tenant, transcriptionId: string, template: string): StoredSummary | null {
  const row = db
    .query<SummaryRow, [string, string, string, string]>("SELECT * FROM summaries WHERE transcription_id = ? AND template = ? AND project_id = ? AND mode = ?")
    .get(transcriptionId, template, tenant.projectId, tenant.mode);
  return row ? toStored(row) : null;
}

export function insertSummary(db: Database, tenant: Tenant, s: Summary, endUserId: string | null): void {
  db.query(
    `INSERT INTO summaries (id, project_id, mode, transcription_id, recording_id, end_user_id, template, format, status, run, prompt_version, created_at, started_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?)`,
  ).run(
    s.id,
    tenant.projectId,
    tenant.mode,
    s.transcription_id,
    s.recording_id,
    endUserId,
    s.template,
    s.format,
    s.status,
    s.prompt_version,
    s.created_at,
    s.started_at,
  );
}

/** Replacement: the same summary back to processing under a new run number; returns that number. */
export function restartSummary(db: Database, tenant: Tenant, id: string, promptVersion: string, startedAt: string): number {
  const row = db
    .query<{ run: number }, [string, string, string, string, string]>(
      `UPDATE summaries SET status = 'processing', run = run + 1, text = NULL, structured = NULL, sections = NULL, error = NULL, model = NULL,
         prompt_version = ?, started_at = ?, completed_at = NULL, failed_at = NULL
       WHERE id = ? AND project_id = ? AND mode = ? RETURNING run`,
    )
    .get(promptVersion, startedAt, id, tenant.projectId, tenant.mode);
  return row?.run ?? 0;
}

/** processing -> completed for this run only; false when a newer run replaced it (or it is gone). */
export function markSummaryCompleted(
  db: Database,
  tenant: Tenant,
  id: string,
  run: number,
  result: { text: string; structured: object; sections: SummarySection[]; model: string; completed_at: string },
): boolean {
  const { text, structured, sections, model, completed_at } = result;
  return (
    db
      .query(
        `UPDATE summaries SET status = 'completed', text = ?, structured = ?, sections = ?, model = ?, completed_at = ?
         WHERE id = ? AND project_id = ? AND mode = ? AND run = ? AND status = 'processing'`,
      )
      .run(text, JSON.stringify(structured), JSON.stringify(sections), model, completed_at, id, tenant.projectId, tenant.mode, run).changes === 1
  );
}

export function markSummaryFailed(db: Database, tenant: Tenant, id: string, run: number, error: Summary["error"], failedAt: string): boolean {
  return (
    db
      .query(
        "UPDATE summaries SET status = 'failed', error = ?, failed_at = ? WHERE id = ? AND project_id = ? AND mode = ? AND run = ? AND status = 'processing'",
      )
      .run(JSON.stringify(error), failedAt, id, tenant.projectId, tenant.mode, run).changes === 1
  );
}

export type SummaryFilter = { transcriptionId?: string; endUserId?: string | null };

export function listSummaryRows(db: Database, tenant: Tenant, filter: SummaryFilter, page: PageRequest): Page<Summary> {
  const where = ["project_id = ?", "mode = ?"];
  const params: SQLQueryBindings[] = [tenant.projectId, tenant.mode];
  if (filter.transcriptionId) {
    where.push("transcription_id = ?");
    params.push(filter.transcriptionId);
  }
  if (filter.endUserId) {
    where.push("end_user_id = ?");
    params.push(filter.endUserId);
  }
  return paginate<SummaryRow, Summary>(db, { table: "summaries", where, params }, page, (row) => toStored(row).record);
}
