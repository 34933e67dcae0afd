import type { Database } from "bun:sqlite";
import type { Mode } from "../../tenancy";

/** An invite as redeeming it needs it: whether it is spent or old, and whose tenant it opens. */
export type InviteRow = {
  id: string;
  end_user_id: string;
  expires_at: string;
  used_at: string | null;
  project_id: string;
  mode: Mode;
  end_user_deleted_at: string | null;
};

/** A session with what its Principal needs: the end user's tenant and organization. */
export type PortalSessionRow = {
  id: string;
  end_user_id: string;
  created_at: string;
  last_seen_at: string;
  project_id: string;
  organization_id: string;
  mode: Mode;
};

export function insertInvite(db: Database, row: { id: string; endUserId: string; tokenHash: string; createdAt: string; expiresAt: string }): void {
  db.query("INSERT INTO portal_invites (id, end_user_id, token_hash, created_at, expires_at) VALUES (?, ?, ?, ?, ?)").run(
    row.id,
    row.endUserId,
    row.tokenHash,
    row.createdAt,
    row.expiresAt,
  );
}

export function findInviteByHash(db: Database, tokenHash: string): InviteRow | null {
  return db
    .query<InviteRow, [string]>(
      `SELECT i.id, i.end_user_id, i.expires_at, i.used_at, u.project_id, u.mode, u.deleted_at AS end_user_deleted_at
       FROM portal_invites i JOIN end_users u ON u.id = i.end_user_id WHERE i.token_hash = ?`,
    )
    .get(tokenHash);
}

/** Spends an invite; false when it was already spent (the one use is decided here, not by an earlier read). */
export function spendInvite(db: Database, id: string, now: string): boolean {
  return db.query("UPDATE portal_invites SET used_at = ? WHERE id = ? AND used_at IS NULL").run(now, id).changes === 1;
}

export function insertPortalSession(db: Database, id: string, endUserId: string, tokenHash: string, now: string): void {
  db.query("INSERT INTO portal_sessions (id, end_user_id, token_hash, created_at, last_seen_at) VALUES (?, ?, ?, ?, ?)").run(
    id,
    endUserId,
    tokenHash,
    now,
    now,
  );
}

/** A session that has not ended, of an end user that is not deleted. */
export function findPortalSession(db: Database, tokenHash: string): PortalSessionRow | null {
  return db
    .query<PortalSessionRow, [string]>(
      `SELECT s.id, s.end_user_id, s.created_at, s.last_seen_at, u.project_id, p.organization_id, u.mode
       FROM portal_sessions s JOIN end_users u ON u.id = s.end_user_id JOIN projects p ON p.id = u.project_id
       WHERE s.token_hash = ? AND s.ended_at IS NULL AND u.deleted_at IS NULL`,
    )
    .get(tokenHash);
}

export function touchPortalSession(db: Database, id: string, now: Date): void {
  db.query("UPDATE portal_sessions SET last_seen_at = ? WHERE id = ?").run(now.toISOString(), id);
}

export function endPortalSession(db: Database, id: string, now: Date): void {
  db.query("UPDATE portal_sessions SET ended_at = ? WHERE id = ? AND ended_at IS NULL").run(now.toISOString(), id);
}

/** Sessions that ended or can no longer be live (older than `before`) are of no use to keep. */
export function purgePortalSessions(db: Database, before: Date): void {
  db.query("DELETE FROM portal_sessions WHERE ended_at IS NOT NULL OR created_at < ?").run(before.toISOString());
}

/** An end user's deletion takes their ways in with it: every session and invite. */
export function deleteWearerAccess(db: Database, endUserId: string): void {
  db.query("DELETE FROM portal_sessions WHERE end_user_id = ?").run(endUserId);
  db.query("DELETE FROM portal_invites WHERE end_user_id = ?").run(endUserId);
}

/** The tenant of an end user named by id alone (the CLI knows no project), null when unknown. */
export function findEndUserTenant(db: Database, endUserId: string): { project_id: string; organization_id: string; mode: Mode } | null {
  return db
    .query<{ project_id: string; organization_id: string; mode: Mode }, [string]>(
      "SELECT u.project_id, p.organization_id, u.mode FROM end_users u JOIN projects p ON p.id = u.project_id WHERE u.id = ?",
    )
    .get(endUserId);
}

/** The live end users, in any project and mode, whose email is this one (case-insensitive): whom an SSO email names. */
export function findLiveEndUsersByEmail(db: Database, email: string): { id: string; project_id: string; mode: Mode }[] {
  return db
    .query<{ id: string; project_id: string; mode: Mode }, [string]>(
      "SELECT id, project_id, mode FROM end_users WHERE email = ? COLLATE NOCASE AND deleted_at IS NULL LIMIT 2",
    )
    .all(email);
}
