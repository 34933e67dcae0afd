import type { Database } from "bun:sqlite";
import type { Admin } from "../admins/service";

/** The administrator an identity at the provider signs in as, or null before its first sign-in. */
export function findIdentityAdmin(db: Database, issuer: string, subject: string): Admin | null {
  return db
    .query<Admin, [string, string]>(
      `SELECT a.id, a.email, a.role, a.created_at, a.updated_at
         FROM admin_identities i JOIN admins a ON a.id = i.admin_id
        WHERE i.issuer = ? AND i.subject = ?`,
    )
    .get(issuer, subject);
}

export function insertIdentity(db: Database, issuer: string, subject: string, adminId: string, now: Date): void {
  const at = now.toISOString();
  db.query("INSERT INTO admin_identities (issuer, subject, admin_id, created_at, last_sign_in_at) VALUES (?, ?, ?, ?, ?)").run(
    issuer,
    subject,
    adminId,
    at,
    at,
  );
}

export function touchIdentity(db: Database, issuer: string, subject: string, now: Date): void {
  db.query("UPDATE admin_identities SET last_sign_in_at = ? WHERE issuer = ? AND subject = ?").run(now.toISOString(), issuer, subject);
}
