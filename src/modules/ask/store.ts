import type { Database } from "bun:sqlite";
import type { Tenant } from "../../tenancy";
import { type Page, type PageRequest, paginate } from "../../http/pagination";
import type { SearchResult } from "../search/schema";
import type { AskMessage, AskSession } from "./schema";

type SessionRow = {
  id: string;
  project_id: string;
  mode: string;
  end_user_id: string | null;
  scope_type: AskSession["scope"]["type"];
  recording_ids: string;
  recording_title: string | null;
  title: string;
  message_count: number;
  last_message_at: string | null;
  last_model: string | null;
  last_provider: string | null;
  created_at: string;
  updated_at: string;
};

type MessageRow = {
  id: string;
  session_id: string;
  role: AskMessage["role"];
  content: string;
  parts: string;
  context_refs: string;
  sources: string;
  tokens: string | null;
  model: string | null;
  provider: string | null;
  finish_reason: string | null;
  created_at: string;
};

function toSession(r: SessionRow): AskSession {
  return {
    id: r.id,
    end_user_id: r.end_user_id,
    scope: { type: r.scope_type, recording_ids: JSON.parse(r.recording_ids), recording_title: r.recording_title },
    title: r.title,
    message_count: r.message_count,
    last_message_at: r.last_message_at,
    last_model: r.last_model,
    last_provider: r.last_provider,
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

function toMessage(r: MessageRow): AskMessage {
  return {
    id: r.id,
    session_id: r.session_id,
    role: r.role,
    content: r.content,
    parts: JSON.parse(r.parts),
    tokens: r.tokens ? JSON.parse(r.tokens) : null,
    model: r.model,
    provider: r.provider,
    finish_reason: r.finish_reason,
    context_refs: JSON.parse(r.context_refs),
    created_at: r.created_at,
  };
}

export function insertSession(db: Database, tenant: Tenant, s: AskSession): void {
  db.query(
    `INSERT INTO ask_sessions (id, project_id, mode, end_user_id, scope_type, recording_ids, recording_title, title, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    s.id,
    tenant.projectId,
    tenant.mode,
    s.end_user_id,
    s.scope.type,
    JSON.stringify(s.scope.recording_ids),
    s.scope.recording_title,
    s.title,
    s.created_at,
    s.updated_at,
  );
}

export function findSession(db: Database, tenant: Tenant, id: string): AskSession | null {
  const row = db
    .query<SessionRow, [string, string, string]>("SELECT * FROM ask_sessions WHERE id = ? AND project_id = ? AND mode = ?")
    .get(id, tenant.projectId, tenant.mode);
  return row ? toSession(row) : null;
}

export function deleteSessionRow(db: Database, tenant: Tenant, id: string): void {
  db.query("DELETE FROM ask_sessions WHERE id = ? AND project_id = ? AND mode = ?").run(id, tenant.projectId, tenant.mode);
}

export function listSessionRows(db: Database, tenant: Tenant, endUserId: string | undefined, page: PageRequest): Page<AskSession> {
  const where = ["project_id = ?", "mode = ?"];
  const params = [tenant.projectId, tenant.mode];
  if (endUserId) {
    where.push("end_user_id = ?");
    params.push(endUserId);
  }
  return paginate<SessionRow, AskSession>(db, { table: "ask_sessions", where, params }, page, toSession);
}

/**
 * Appends a message and moves the session's counters; assistant messages also set
 * last_model/last_provider. False, and nothing written, when the session is gone (deleted
 * while its model was answering).
 */
export function appendMessage(db: Database, tenant: Tenant, m: AskMessage, sources: SearchResult[]): boolean {
  return db.transaction(() => {
    const moved = db
      .query(
        `UPDATE ask_sessions SET message_count = message_count + 1, last_message_at = ?, updated_at = ?,
         last_model = COALESCE(?, last_model), last_provider = COALESCE(?, last_provider)
       WHERE id = ? AND project_id = ? AND mode = ?`,
      )
      .run(m.created_at, m.created_at, m.model, m.provider, m.session_id, tenant.projectId, tenant.mode);
    if (moved.changes === 0) return false;
    db.query(
      `INSERT INTO ask_messages (id, session_id, project_id, mode, role, content, parts, context_refs, sources, tokens, model, provider, finish_reason, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      m.id,
      m.session_id,
      tenant.projectId,
      tenant.mode,
      m.role,
      m.content,
      JSON.stringify(m.parts),
      JSON.stringify(m.context_refs),
      JSON.stringify(sources),
      m.tokens ? JSON.stringify(m.tokens) : null,
      m.model,
      m.provider,
      m.finish_reason,
      m.created_at,
    );
    return true;
  })();
}

/** The session's messages, oldest first, for the prompt of the next turn. */
export function conversation(db: Database, tenant: Tenant, sessionId: string): AskMessage[] {
  return db
    .query<MessageRow, [string, string, string]>("SELECT * FROM ask_messages WHERE session_id = ? AND project_id = ? AND mode = ? ORDER BY created_at, id")
    .all(sessionId, tenant.projectId, tenant.mode)
    .map(toMessage);
}

export function listMessageRows(db: Database, tenant: Tenant, sessionId: string, page: PageRequest): Page<AskMessage> {
  return paginate<MessageRow, AskMessage>(
    db,
    { table: "ask_messages", where: ["session_id = ?", "project_id = ?", "mode = ?"], params: [sessionId, tenant.projectId, tenant.mode] },
    page,
    toMessage,
  );
}

/** Removes the sessions scoped to one recording, with their messages. */
export function deleteRecordingSessions(db: Database, tenant: Tenant, recordingId: string): void {
  db.query(
    `DELETE FROM ask_sessions WHERE project_id = ? AND mode = ? AND scope_type = 'recording'
     AND EXISTS (SELECT 1 FROM json_each(recording_ids) WHERE value = ?)`,
  ).run(tenant.projectId, tenant.mode, recordingId);
}

export type Turn = { sessionId: string; answerId: string; questionId: string | null; question: string | null };

/**
 * The turns whose answer was given or cited a recording's passages: the answer and the
 * question just before it in its session. `since` is the recording's creation (no answer
 * drew on it earlier).
 */
export function turnsDrawingOn(db: Database, tenant: Tenant, recordingId: string, since: string): Turn[] {
  return db
    .query<Turn, [string, string, string, string, string]>(
      `SELECT a.session_id AS sessionId, a.id AS answerId, q.id AS questionId, q.content AS question
       FROM ask_messages a LEFT JOIN ask_messages q ON q.id = (
         SELECT id FROM ask_messages WHERE session_id = a.session_id AND role = 'user' AND (created_at, id) < (a.created_at, a.id)
         ORDER BY created_at DESC, id DESC LIMIT 1)
       WHERE a.project_id = ? AND a.mode = ? AND a.role = 'assistant' AND a.created_at >= ?
       AND (instr(a.sources, ?) > 0 OR instr(a.parts, ?) > 0)`,
    )
    .all(tenant.projectId, tenant.mode, since, recordingId, recordingId);
}

export function deleteMessage(db: Database, id: string): void {
  db.query("DELETE FROM ask_messages WHERE id = ?").run(id);
}

/** Counts a session's messages again after some were removed; a title that was a removed question becomes the default. */
export function recountSession(db: Database, sessionId: string, replaceTitle: { was: string; by: string } | null, now: string): void {
  db.query(
    `UPDATE ask_sessions SET message_count = (SELECT count(*) FROM ask_messages WHERE session_id = ?1),
       last_message_at = (SELECT max(created_at) FROM ask_messages WHERE session_id = ?1),
       title = CASE WHEN title = ?2 THEN ?3 ELSE title END, updated_at = ?4
     WHERE id = ?1`,
  ).run(sessionId, replaceTitle?.was ?? null, replaceTitle?.by ?? null, now);
}
