import type { Database } from "bun:sqlite";
import { newId } from "../../ids";
import type { Role } from "../../http/roles";
import type { Mode } from "../../tenancy";

export type AdminRow = { id: string; email: string; role: Role; password_hash: string; created_at: string; updated_at: string };
export type Admin = Omit<AdminRow, "password_hash">;

export function countAdmins(db: Database): number {
  return db.query<{ n: number }, []>("SELECT count(*) AS n FROM admins").get()!.n;
}

export function findAdminByEmail(db: Database, email: string): AdminRow | null {
  return db.query<AdminRow, [string]>("SELECT * FROM admins WHERE email = ?").get(email);
}

export function findAdminById(db: Database, id: string): AdminRow | null {
  return db.query<AdminRow, [string]>("SELECT * FROM admins WHERE id = ?").get(id);
}

export function countOwners(db: Database): number {
  return db.query<{ n: number }, []>("SELECT count(*) AS n FROM admins WHERE role = 'owner'").get()!.n;
}

export function setAdminRole(db: Database, adminId: string, role: Role, now: Date): void {
  db.query("UPDATE admins SET role = ?, updated_at = ? WHERE id = ?").run(role, now.toISOString(), adminId);
}

export function listAdmins(db: Database): Admin[] {
  return db.query<Admin, []>("SELECT id, email, role, created_at, updated_at FROM admins ORDER BY created_at, id").all();
}

export function insertAdmin(db: Database, email: string, passwordHash: string, role: Role, now: Date): Admin {
  const at = now.toISOString();
  const admin = { id: newId("adm_", now.getTime()), email, role, created_at: at, updated_at: at };
  db.query("INSERT INTO admins (id, email, role, password_hash, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)").run(
    admin.id,
    email,
    role,
    passwordHash,
    at,
    at,
  );
  return admin;
}

export function setAdminPassword(db: Database, adminId: string, passwordHash: string, now: Date): void {
  db.query("UPDATE admins SET password_hash = ?, updated_at = ? WHERE id = ?").run(passwordHash, now.toISOString(), adminId);
}

/** Removes an administrator; their sessions go with them (ON DELETE CASCADE). */
export function deleteAdmin(db: Database, adminId: string): void {
  db.query("DELETE FROM admins WHERE id = ?").run(adminId);
}

/** The SHA-256 of the open setup token, or null: none was made, or an administrator came to exist since (migration 0022's trigger). */
export function findSetupTokenHash(db: Database): string | null {
  return db.query<{ token_hash: string }, []>("SELECT token_hash FROM setup_token").get()?.token_hash ?? null;
}

/** Makes `tokenHash` the one setup token, replacing any other. */
export function saveSetupTokenHash(db: Database, tokenHash: string, now: Date): void {
  db.query("INSERT OR REPLACE INTO setup_token (id, token_hash, created_at) VALUES (1, ?, ?)").run(tokenHash, now.toISOString());
}

/** A session joined with what the auth path needs: its administrator and its project's organization. */
export type SessionRow = {
  id: string;
  admin_id: string;
  email: string;
  role: Role;
  project_id: string | null;
  organization_id: string | null;
  mode: Mode;
  created_at: string;
  last_seen_at: string;
  signed_in_with: SignedInWith;
  /** 1 when the administrator has a confirmed second factor (migration 0028). */
  has_second_factor: 0 | 1;
};

/** How a session was signed in (migration 0028): a local password, or the identity provider. */
export type SignedInWith = "password" | "sso";

export function insertSession(
  db: Database,
  adminId: string,
  tokenHash: string,
  projectId: string | null,
  now: Date,
  signedInWith: SignedInWith = "password",
): string {
  const id = newId("ses_", now.getTime());
  const at = now.toISOString();
  db.query(
    "INSERT INTO admin_sessions (id, admin_id, token_hash, project_id, mode, created_at, last_seen_at, signed_in_with) VALUES (?, ?, ?, ?, 'test', ?, ?, ?)",
  ).run(id, adminId, tokenHash, projectId, at, at, signedInWith);
  return id;
}

/** The session a token hash stands for, unless it was ended. Timeouts are judged by the caller. */
export function findSession(db: Database, tokenHash: string): SessionRow | null {
  return db
    .query<SessionRow, [string]>(
      `SELECT s.id, s.admin_id, a.email, a.role, s.project_id, p.organization_id, s.mode, s.created_at, s.last_seen_at, s.signed_in_with,
              EXISTS (SELECT 1 FROM admin_second_factors f WHERE f.admin_id = s.admin_id AND f.confirmed_at IS NOT NULL) AS has_second_factor
         FROM admin_sessions s JOIN admins a ON a.id = s.admin_id LEFT JOIN projects p ON p.id = s.project_id
        WHERE s.token_hash = ? AND s.ended_at IS NULL`,
    )
    .get(tokenHash);
}

export function touchSession(db: Database, sessionId: string, now: Date): void {
  db.query("UPDATE admin_sessions SET last_seen_at = ? WHERE id = ?").run(now.toISOString(), sessionId);
}

export function selectSessionTenant(db: Database, sessionId: string, projectId: string, mode: Mode): void {
  db.query("UPDATE admin_sessions SET project_id = ?, mode = ? WHERE id = ?").run(projectId, mode, sessionId);
}

export function endSession(db: Database, sessionId: string, now: Date): void {
  db.query("UPDATE admin_sessions SET ended_at = ? WHERE id = ? AND ended_at IS NULL").run(now.toISOString(), sessionId);
}

/** Ends every session of an administrator (password reset). */
export function endSessionsOf(db: Database, adminId: string, now: Date): void {
  db.query("UPDATE admin_sessions SET ended_at = ? WHERE admin_id = ? AND ended_at IS NULL").run(now.toISOString(), adminId);
}

/** Deletes sessions ended, or last seen, before the cutoff: they can never work again. */
export function purgeSessions(db: Database, cutoff: Date): number {
  const at = cutoff.toISOString();
  return db.query("DELETE FROM admin_sessions WHERE ended_at <= ?1 OR last_seen_at <= ?1").run(at).changes;
}
