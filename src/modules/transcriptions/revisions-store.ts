import type { Database } from "bun:sqlite";
import type { Tenant } from "../../tenancy";
import type { Author, Change, Revision } from "./revisions-schema";
import type { Transcription } from "./schema";

/** A revision's content: what a read with ?revision=N shows in place of the latest. */
export type RevisionContent = Pick<Transcription, "text" | "segments" | "speakers">;
export type StoredRevision = Revision & { content: RevisionContent };

type RevisionRow = {
  transcription_id: string;
  revision: number;
  text: string | null;
  segments: string;
  speakers: string;
  changes: string;
  restored_from: number | null;
  author: string | null;
  created_at: string;
};

type RecordRow = Omit<RevisionRow, "text" | "segments" | "speakers">;

const toRevision = (row: RecordRow): Revision => ({
  transcription_id: row.transcription_id,
  revision: row.revision,
  author: row.author ? JSON.parse(row.author) : null,
  changes: JSON.parse(row.changes),
  restored_from: row.restored_from,
  created_at: row.created_at,
});

const toStored = (row: RevisionRow): StoredRevision => ({
  ...toRevision(row),
  content: { text: row.text, segments: JSON.parse(row.segments), speakers: JSON.parse(row.speakers) },
});

export function insertRevision(
  db: Database,
  tenant: Tenant,
  transcriptionId: string,
  revision: { number: number; content: RevisionContent; changes: Change[]; restoredFrom: number | null; author: Author | null; createdAt: string },
): void {
  db.query(
    `INSERT INTO transcription_revisions (transcription_id, revision, project_id, mode, text, segments, speakers, changes, restored_from, author, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    transcriptionId,
    revision.number,
    tenant.projectId,
    tenant.mode,
    revision.content.text,
    JSON.stringify(revision.content.segments),
    JSON.stringify(revision.content.speakers),
    JSON.stringify(revision.changes),
    revision.restoredFrom,
    revision.author ? JSON.stringify(revision.author) : null,
    revision.createdAt,
  );
}

export function findRevision(db: Database, tenant: Tenant, transcriptionId: string, revision: number): StoredRevision | null {
  const row = db
    .query<RevisionRow, [string, number, string, string]>(
      "SELECT * FROM transcription_revisions WHERE transcription_id = ? AND revision = ? AND project_id = ? AND mode = ?",
    )
    .get(transcriptionId, revision, tenant.projectId, tenant.mode);
  return row ? toStored(row) : null;
}

/** Every kept revision's record (what changed, by whom, when) without its content, oldest first. */
export function listRevisionRows(db: Database, tenant: Tenant, transcriptionId: string): Revision[] {
  return db
    .query<RecordRow, [string, string, string]>(
      `SELECT transcription_id, revision, changes, restored_from, author, created_at FROM transcription_revisions
        WHERE transcription_id = ? AND project_id = ? AND mode = ? ORDER BY revision`,
    )
    .all(transcriptionId, tenant.projectId, tenant.mode)
    .map(toRevision);
}
