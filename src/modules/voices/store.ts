import type { Database, SQLQueryBindings } from "bun:sqlite";
import { type Page, type PageRequest, paginate } from "../../http/pagination";
import type { Tenant } from "../../tenancy";
import type { Voice } from "./schema";

type VoiceRow = Omit<Voice, "sample_count"> & { project_id: string; mode: string };
const COUNT = "(SELECT COUNT(*) FROM voiceprints p WHERE p.voice_id = voices.id)";

function toVoice(row: VoiceRow & { sample_count?: number }, db: Database): Voice {
  const sample_count = row.sample_count ?? db.query<{ n: number }, [string]>("SELECT COUNT(*) AS n FROM voiceprints WHERE voice_id = ?").get(row.id)!.n;
  return { id: row.id, name: row.name, end_user_id: row.end_user_id, sample_count, created_at: row.created_at, updated_at: row.updated_at };
}

export function insertVoice(db: Database, tenant: Tenant, v: Voice): void {
  db.query("INSERT INTO voices (id, project_id, mode, end_user_id, name, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)").run(
    v.id,
    tenant.projectId,
    tenant.mode,
    v.end_user_id,
    v.name,
    v.created_at,
    v.updated_at,
  );
}

export function findVoice(db: Database, tenant: Tenant, id: string): Voice | null {
  const row = db
    .query<VoiceRow & { sample_count: number }, [string, string, string]>(
      `SELECT *, ${COUNT} AS sample_count FROM voices WHERE id = ? AND project_id = ? AND mode = ?`,
    )
    .get(id, tenant.projectId, tenant.mode);
  return row ? toVoice(row, db) : null;
}

/** The tenant's voice of this name that belongs to this end user (or to none). */
export function findVoiceByName(db: Database, tenant: Tenant, name: string, endUserId: string | null): Voice | null {
  const row = db
    .query<VoiceRow, [string, string, string, string | null]>(
      "SELECT * FROM voices WHERE project_id = ? AND mode = ? AND name = ? AND end_user_id IS ? ORDER BY created_at LIMIT 1",
    )
    .get(tenant.projectId, tenant.mode, name, endUserId);
  return row ? toVoice(row, db) : null;
}

export function updateVoiceRow(db: Database, tenant: Tenant, v: Voice): void {
  db.query("UPDATE voices SET name = ?, end_user_id = ?, updated_at = ? WHERE id = ? AND project_id = ? AND mode = ?").run(
    v.name,
    v.end_user_id,
    v.updated_at,
    v.id,
    tenant.projectId,
    tenant.mode,
  );
}

/** The voice and, by the foreign key, its voiceprints. */
export function deleteVoiceRow(db: Database, tenant: Tenant, id: string): void {
  db.query("DELETE FROM voiceprints WHERE voice_id = ?").run(id);
  db.query("DELETE FROM voices WHERE id = ? AND project_id = ? AND mode = ?").run(id, tenant.projectId, tenant.mode);
}

export function listVoiceRows(db: Database, tenant: Tenant, endUserId: string | undefined, page: PageRequest): Page<Voice> {
  const where = ["project_id = ?", "mode = ?"];
  const params: SQLQueryBindings[] = [tenant.projectId, tenant.mode];
  if (endUserId) {
    where.push("end_user_id = ?");
    params.push(endUserId);
  }
  return paginate<VoiceRow, Voice>(db, { table: "voices", where, params }, page, (row) => toVoice(row, db));
}

export function insertVoiceprint(
  db: Database,
  voiceId: string,
  p: { kind: string; print: number[]; recordingId: string | null; startMs: number | null; endMs: number | null; at: string },
): void {
  db.query("INSERT INTO voiceprints (voice_id, kind, print, recording_id, start_ms, end_ms, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)").run(
    voiceId,
    p.kind,
    JSON.stringify(p.print),
    p.recordingId,
    p.startMs,
    p.endMs,
    p.at,
  );
}

/** Voices with prints of `kind` a recording of this end user may be matched against: theirs and the project's unlinked ones. */
export function voicesWithPrints(
  db: Database,
  tenant: Tenant,
  kind: string,
  endUserId: string | null,
): { id: string; name: string; endUserId: string | null; prints: number[][] }[] {
  const rows = db
    .query<{ id: string; name: string; end_user_id: string | null; print: string }, [string, string, string, string | null]>(
      `SELECT v.id, v.name, v.end_user_id, p.print FROM voices v JOIN voiceprints p ON p.voice_id = v.id
       WHERE v.project_id = ? AND v.mode = ? AND p.kind = ? AND (v.end_user_id IS NULL OR v.end_user_id = ?) ORDER BY v.id, p.id`,
    )
    .all(tenant.projectId, tenant.mode, kind, endUserId);
  const voices = new Map<string, { id: string; name: string; endUserId: string | null; prints: number[][] }>();
  for (const r of rows) {
    const v = voices.get(r.id) ?? { id: r.id, name: r.name, endUserId: r.end_user_id, prints: [] };
    v.prints.push(JSON.parse(r.print));
    voices.set(r.id, v);
  }
  return [...voices.values()];
}

/** Erasure: prints taken from a recording go with it; an end user's voices with them. */
export function deletePrintsOfRecording(db: Database, recordingId: string): void {
  db.query("DELETE FROM voiceprints WHERE recording_id = ?").run(recordingId);
}

export function deleteVoicesOfEndUser(db: Database, tenant: Tenant, endUserId: string): void {
  db.query("DELETE FROM voiceprints WHERE voice_id IN (SELECT id FROM voices WHERE project_id = ? AND mode = ? AND end_user_id = ?)").run(
    tenant.projectId,
    tenant.mode,
    endUserId,
  );
  db.query("DELETE FROM voices WHERE project_id = ? AND mode = ? AND end_user_id = ?").run(tenant.projectId, tenant.mode, endUserId);
}
