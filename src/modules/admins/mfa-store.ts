import type { Database } from "bun:sqlite";

/** An administrator's TOTP factor (migration 0028): the sealed secret, never shown after enrolment. */
export type SecondFactorRow = { admin_id: string; secret_sealed: string; confirmed_at: string | null; last_step: number | null; created_at: string };

export function findSecondFactor(db: Database, adminId: string): SecondFactorRow | null {
  return db.query<SecondFactorRow, [string]>("SELECT * FROM admin_second_factors WHERE admin_id = ?").get(adminId);
}

/**
 * Starts (or starts over) an enrolment with a new sealed secret; false when the administrator
 * already has a confirmed factor, which only removing it replaces.
 */
export function savePendingSecondFactor(db: Database, adminId: string, secretSealed: string, now: Date): boolean {
  return (
    db
      .query(
        `INSERT INTO admin_second_factors (admin_id, secret_sealed, created_at) VALUES (?1, ?2, ?3)
         ON CONFLICT (admin_id) DO UPDATE SET secret_sealed = ?2, created_at = ?3, last_step = NULL WHERE confirmed_at IS NULL`,
      )
      .run(adminId, secretSealed, now.toISOString()).changes === 1
  );
}

/**
 * Records `step` as the last code used, only if it is later than any used before (a code works
 * once, and an older one never after a newer), and, with `confirmAt`, confirms a pending factor.
 * One statement, so of two requests racing with the same code exactly one wins.
 */
export function spendStep(db: Database, adminId: string, step: number, confirmAt: Date | null): boolean {
  const state = confirmAt ? "confirmed_at IS NULL" : "confirmed_at IS NOT NULL";
  return (
    db
      .query(
        `UPDATE admin_second_factors SET last_step = ?1, confirmed_at = coalesce(confirmed_at, ?2)
          WHERE admin_id = ?3 AND ${state} AND (last_step IS NULL OR last_step < ?1)`,
      )
      .run(step, confirmAt?.toISOString() ?? null, adminId).changes === 1
  );
}

/** Replaces an administrator's recovery codes with these hashes. */
export function replaceRecoveryCodes(db: Database, adminId: string, codeHashes: readonly string[]): void {
  db.query("DELETE FROM admin_recovery_codes WHERE admin_id = ?").run(adminId);
  const insert = db.query("INSERT INTO admin_recovery_codes (admin_id, code_hash) VALUES (?, ?)");
  for (const hash of codeHashes) insert.run(adminId, hash);
}

/** Marks a recovery code used; false when it is unknown or was used already (of two racing uses, one wins). */
export function spendRecoveryCode(db: Database, adminId: string, codeHash: string, now: Date): boolean {
  return (
    db.query("UPDATE admin_recovery_codes SET used_at = ? WHERE admin_id = ? AND code_hash = ? AND used_at IS NULL").run(now.toISOString(), adminId, codeHash)
      .changes === 1
  );
}

export function countRecoveryCodesLeft(db: Database, adminId: string): number {
  return db.query<{ n: number }, [string]>("SELECT count(*) AS n FROM admin_recovery_codes WHERE admin_id = ? AND used_at IS NULL").get(adminId)!.n;
}

/** Removes an administrator's factor and recovery codes; false when there was none. */
export function deleteSecondFactor(db: Database, adminId: string): boolean {
  db.query("DELETE FROM admin_recovery_codes WHERE admin_id = ?").run(adminId);
  return db.query("DELETE FROM admin_second_factors WHERE admin_id = ?").run(adminId).changes === 1;
}
