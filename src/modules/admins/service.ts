import type { Database } from "bun:sqlite";
import { sha256Hex } from "../../crypto";
import { ApiError } from "../../http/errors";
import type { Role } from "../../http/roles";
import { newSecret } from "../../ids";
import { type Admin, countAdmins, deleteAdmin, endSessionsOf, findAdminByEmail, insertAdmin, listAdmins, saveSetupTokenHash, setAdminPassword } from "./store";

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

/** Makes an administrator; emails are unique, case-insensitively. */
export async function createAdmin(db: Database, email: string, password: string, role: Role, now: Date): Promise<Admin> {
  const normal = normalEmail(email);
  checkPassword(password);
  if (findAdminByEmail(db, normal)) throw new ApiError("resource_already_exists", `An administrator ${normal} already exists.`, { param: "email" });
  return insertAdmin(db, normal, await hashPassword(password), role, now);
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

function existing(db: Database, email: string) {
  const admin = findAdminByEmail(db, email.trim());
  if (!admin) throw new ApiError("not_found", `No administrator ${email.trim()}.`, { param: "email" });
  return admin;
}

/** A new password; every session of the administrator ends, so a stolen session dies with the old password. */
export async function resetAdminPassword(db: Database, email: string, password: string, now: Date): Promise<Admin> {
  checkPassword(password);
  const admin = existing(db, email);
  const hash = await hashPassword(password);
  db.transaction(() => {
    setAdminPassword(db, admin.id, hash, now);
    endSessionsOf(db, admin.id, now);
  })();
  const { password_hash: _, ...rest } = admin;
  return rest;
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

/** Removes an administrator and their sessions. */
export function removeAdmin(db: Database, email: string): Admin {
  const { password_hash: _, ...admin } = existing(db, email);
  deleteAdmin(db, admin.id);
  return admin;
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
