import type { Database } from "bun:sqlite";
import { sha256Hex } from "../../crypto";
import { ApiError } from "../../http/errors";
import type { Role } from "../../http/roles";
import { newSecret } from "../../ids";
import { type Actor, operatorActor, recordAudit } from "../audit/service";
import {
  type Admin,
  type AdminRow,
  countAdmins,
  countOwners,
  deleteAdmin,
  endSessionsOf,
  findAdminByEmail,
  findAdminById,
  insertAdmin,
  listAdmins,
  saveSetupTokenHash,
  setAdminPassword,
  setAdminRole,
} from "./store";

export type { Admin };
export { countAdmins, listAdmins };

const EMAIL = /^[^\s@]+@[^\s@]+$/;
export const MIN_PASSWORD_LENGTH = 12;
const MAX_PASSWORD_LENGTH = 1024;

/** Argon2id (Bun.password's default algorithm) with its default cost. */
export const hashPassword = (password: string): Promise<string> => Bun.password.hash(password, { algorithm: "argon2id" });

function normalEmail(email: string): string {
  const trimmed = email.trim();
  if (!EMAIL.test(trimmed) || trimmed.length > 254)
    throw new ApiError("validation_error", "Give an email address such as admin@clinic.example.", { param: "email" });
  return trimmed.toLowerCase();
}

function checkPassword(password: string): void {
  if (password.length < MIN_PASSWORD_LENGTH)
    throw new ApiError("validation_error", `A password has at least ${MIN_PASSWORD_LENGTH} characters.`, { param: "password" });
  if (password.length > MAX_PASSWORD_LENGTH)
    throw new ApiError("validation_error", `A password has at most ${MAX_PASSWORD_LENGTH} characters.`, { param: "password" });
}

/**
 * Makes an administrator; emails are unique, case-insensitively. Audited, as role changes and
 * removals are: who may reach content changes (decision 136). Organization-wide, so no tenant.
 */
export async function createAdmin(db: Database, email: string, password: string, role: Role, now: Date, actor: Actor = operatorActor()): Promise<Admin> {
  const normal = normalEmail(email);
  checkPassword(password);
  if (findAdminByEmail(db, normal)) throw new ApiError("resource_already_exists", `An administrator ${normal} already exists.`, { param: "email" });
  const hash = await hashPassword(password);
  return db.transaction(() => {
    const admin = insertAdmin(db, normal, hash, role, now);
    recordAudit(db, actor, null, "admin.create", [admin.id], now);
    return admin;
  })();
}

/**
 * An account that single sign-on signs in (decision 144): its password is random and never
 * shown, so only the identity provider lets its person in. `link` runs in the same
 * transaction, to record the identity the account belongs to.
 */
export async function createSsoAdmin(db: Database, email: string, role: Role, now: Date, actor: Actor, link: (admin: Admin) => void): Promise<Admin> {
  const normal = normalEmail(email);
  const hash = await hashPassword(newSecret("sso_"));
  return db
    .transaction(() => {
      if (findAdminByEmail(db, normal)) throw new ApiError("resource_already_exists", `An administrator ${normal} already exists.`, { param: "email" });
      const admin = insertAdmin(db, normal, hash, role, now);
      recordAudit(db, actor, null, "admin.create", [admin.id], now);
      link(admin);
      return admin;
    })
    .immediate();
}

/**
 * The first administrator, from the dashboard's setup page: refused once any exists, so
 * of two racing setups one wins (the insert and the check are one statement's transaction).
 */
export async function createFirstAdmin(db: Database, email: string, password: string, now: Date): Promise<Admin> {
  const normal = normalEmail(email);
  checkPassword(password);
  const hash = await hashPassword(password);
  return db
    .transaction(() => {
      if (countAdmins(db) > 0) throw new ApiError("resource_conflict", "Setup is done: an administrator exists. Sign in instead.");
      // The first account can do everything, including making the others.
      return insertAdmin(db, normal, hash, "owner", now);
    })
    .immediate();
}

/** A new password; every session of the administrator ends, so a stolen session dies with the old password. */
export async function resetAdminPassword(db: Database, email: string, password: string, now: Date): Promise<Admin> {
  checkPassword(password);
  const admin = found(db, { email });
  const hash = await hashPassword(password);
  db.transaction(() => {
    setAdminPassword(db, admin.id, hash, now);
    endSessionsOf(db, admin.id, now);
  })();
  return admin;
}

/**
 * A new one-time setup token while no administrator exists (null otherwise), replacing any
 * earlier one; the database keeps its hash only. The caller shows it to the operator: the
 * server's log at start, `parley admin remove` when it removes the last administrator.
 * It is spent when any administrator comes to exist (decision 115).
 */
export function openSetupToken(db: Database, now: Date): string | null {
  return db
    .transaction(() => {
      if (countAdmins(db) > 0) return null;
      const token = newSecret("setup_");
      saveSetupTokenHash(db, sha256Hex(token), now);
      return token;
    })
    .immediate();
}

/** An administrator named by email (the CLI) or id (the dashboard); 404 otherwise. */
export type AdminRef = { email: string } | { id: string };

function found(db: Database, ref: AdminRef): Admin {
  const row: AdminRow | null = "email" in ref ? findAdminByEmail(db, ref.email.trim()) : findAdminById(db, ref.id);
  if (!row)
    throw new ApiError("not_found", "email" in ref ? `No administrator ${ref.email.trim()}.` : `No administrator ${ref.id}.`, {
      param: "email" in ref ? "email" : "id",
    });
  const { password_hash: _, ...admin } = row;
  return admin;
}

/**
 * Refuses (409) a change that leaves administrators but no owner: nobody could then manage
 * administrators or projects (decision 136). Removing the very last administrator is not
 * such a change: setup opens again, and it makes an owner (decision 115).
 */
function keepAnOwner(db: Database, admin: Admin, after: Role | null): void {
  if (admin.role !== "owner" || after === "owner" || countOwners(db) > 1) return;
  if (after === null && countAdmins(db) === 1) return;
  throw new ApiError("resource_conflict", `${admin.email} is the last owner: make another administrator an owner first.`);
}

/** Removes an administrator and their sessions; never the last owner while others remain (409). */
export function removeAdmin(db: Database, ref: AdminRef, now: Date, actor: Actor = operatorActor()): Admin {
  return db
    .transaction(() => {
      const admin = found(db, ref);
      keepAnOwner(db, admin, null);
      deleteAdmin(db, admin.id);
      recordAudit(db, actor, null, "admin.remove", [admin.id], now);
      return admin;
    })
    .immediate();
}

/** Changes an administrator's role, in effect from their next request; never the last owner's (409). */
export function changeAdminRole(db: Database, ref: AdminRef, role: Role, now: Date, actor: Actor = operatorActor()): Admin {
  return db
    .transaction(() => {
      const admin = found(db, ref);
      keepAnOwner(db, admin, role);
      setAdminRole(db, admin.id, role, now);
      recordAudit(db, actor, null, "admin.role_change", [admin.id], now);
      return { ...admin, role, updated_at: now.toISOString() };
    })
    .immediate();
}

/**
 * The administrator whose email and password these are, or null. An unknown email costs a
 * hash verification too (against `decoyHash`), so response time does not tell which emails exist.
 */
export async function checkAdminPassword(db: Database, email: string, password: string, decoyHash: string): Promise<Admin | null> {
  const row = findAdminByEmail(db, email.trim());
  if (!row) {
    await Bun.password.verify(password, decoyHash);
    return null;
  }
  if (!(await Bun.password.verify(password, row.password_hash))) return null;
  const { password_hash: _, ...admin } = row;
  return admin;
}
