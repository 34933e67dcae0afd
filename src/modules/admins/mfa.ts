import type { Database } from "bun:sqlite";
import { randomInt } from "node:crypto";
import { Secret, TOTP } from "otpauth";
import QRCode from "qrcode";
import type { Clock } from "../../clock";
import { decryptWithServerSecret, encryptWithServerSecret, sha256Hex } from "../../crypto";
import { ApiError } from "../../http/errors";
import { type Actor, recordAudit } from "../audit/service";
import {
  countRecoveryCodesLeft,
  deleteSecondFactor,
  findSecondFactor,
  replaceRecoveryCodes,
  savePendingSecondFactor,
  spendRecoveryCode,
  spendStep,
} from "./mfa-store";
import { findAdminByEmail } from "./store";

/**
 * The second factor of local dashboard accounts (issue 32 item 6, decision 151): TOTP as
 * RFC 6238 and every authenticator app reads it (SHA-1, 6 digits, 30 s), computed by otpauth,
 * and ten one-time recovery codes. A code is accepted one step either side of now (clock
 * drift), once: the last step used is kept, and no code of that step or before works again.
 */

export type SecondFactorDeps = { db: Database; clock: Clock; serverSecret: string };

/** Who the factor is for: an administrator's id and email (the label an authenticator app shows). */
export type FactorOwner = { id: string; email: string };

const PERIOD_SECONDS = 30;
const DIGITS = 6;
/** Steps either side of now that a code may come from: a phone's clock a little off still works. */
const WINDOW = 1;
const RECOVERY_CODE_COUNT = 10;
/** Recovery codes use lowercase letters and digits without the look-alikes (0/o, 1/l/i). */
const RECOVERY_ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789";
/** Three groups of four: 59 bits, far beyond guessing within the sign-in throttle. */
const RECOVERY_GROUPS = 3;
const TOTP_CODE = /^\d{6}$/;

function totpOf(owner: FactorOwner, base32: string): TOTP {
  return new TOTP({ issuer: "Parley", label: owner.email, algorithm: "SHA1", digits: DIGITS, period: PERIOD_SECONDS, secret: Secret.fromBase32(base32) });
}

/** A code as typed: spaces and dashes dropped, lowercase, so "123 456" and "ABCD-efgh-..." both work. */
const normalCode = (code: string) => code.replace(/[\s-]/g, "").toLowerCase();

function newRecoveryCode(): string {
  const group = () => Array.from({ length: 4 }, () => RECOVERY_ALPHABET[randomInt(RECOVERY_ALPHABET.length)]).join("");
  return Array.from({ length: RECOVERY_GROUPS }, group).join("-");
}

/**
 * The time step a TOTP code stands for, or null when it matches no step within the window.
 * Whether that step may still be used is the caller's (spendStep).
 */
function stepOf(deps: SecondFactorDeps, owner: FactorOwner, secretSealed: string, code: string): number | null {
  if (!TOTP_CODE.test(code)) return null;
  const timestamp = deps.clock.now().getTime();
  let secret: string;
  try {
    secret = decryptWithServerSecret(deps.serverSecret, secretSealed);
  } catch {
    // Sealed under another server secret (secret.key lost or PARLEY_SECRET changed): no code can match; recovery codes and reset-mfa still work.
    return null;
  }
  const delta = totpOf(owner, secret).validate({ token: code, timestamp, window: WINDOW });
  return delta === null ? null : TOTP.counter({ period: PERIOD_SECONDS, timestamp }) + delta;
}

/** Whether an administrator has a confirmed second factor, and how many recovery codes are left. */
export function secondFactorStatus(db: Database, adminId: string): { enrolled: boolean; recovery_codes_left: number } {
  const enrolled = Boolean(findSecondFactor(db, adminId)?.confirmed_at);
  return { enrolled, recovery_codes_left: enrolled ? countRecoveryCodesLeft(db, adminId) : 0 };
}

/**
 * A new secret for an administrator without a confirmed factor, shown this once: as text, as
 * an otpauth:// URI and as a QR code of it (a PNG data URL). It works only once confirmed.
 * 409 when a factor is confirmed already (remove it first).
 */
export async function beginEnrolment(deps: SecondFactorDeps, owner: FactorOwner): Promise<{ secret: string; otpauth_uri: string; qr_code: string }> {
  const secret = new Secret({ size: 20 }).base32;
  if (!savePendingSecondFactor(deps.db, owner.id, encryptWithServerSecret(deps.serverSecret, secret), deps.clock.now()))
    throw new ApiError("resource_conflict", "A second factor is set up already: remove it first to set up another.");
  const uri = totpOf(owner, secret).toString();
  return { secret, otpauth_uri: uri, qr_code: await QRCode.toDataURL(uri, { errorCorrectionLevel: "M", margin: 2, width: 240 }) };
}

/**
 * Confirms a pending enrolment with a code from the new secret and returns the recovery codes,
 * shown this once (only their hashes are kept). 409 without a pending enrolment; 422 for a wrong code.
 */
export function confirmEnrolment(deps: SecondFactorDeps, owner: FactorOwner, code: string, actor: Actor): { recovery_codes: string[] } {
  const { db, clock } = deps;
  const pending = findSecondFactor(db, owner.id);
  if (!pending || pending.confirmed_at) throw new ApiError("resource_conflict", "There is no set-up waiting for its first code: start one first.");
  const step = stepOf(deps, owner, pending.secret_sealed, normalCode(code));
  const codes = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode);
  const now = clock.now();
  const confirmed = db.transaction(() => {
    if (step === null || !spendStep(db, owner.id, step, now)) return false;
    replaceRecoveryCodes(
      db,
      owner.id,
      codes.map((c) => sha256Hex(normalCode(c))),
    );
    recordAudit(db, actor, null, "second_factor.enrol", [owner.id], now);
    return true;
  })();
  if (!confirmed) throw new ApiError("validation_error", "That code is wrong or was used already: give the code your app shows now.", { param: "code" });
  return { recovery_codes: codes };
}

/**
 * Checks a sign-in's second factor: a TOTP code of the confirmed secret, or an unused recovery
 * code (which is then spent, and its use audited). Returns which worked, or null.
 */
export function verifySecondFactor(deps: SecondFactorDeps, owner: FactorOwner, code: string, actor: Actor): "totp" | "recovery_code" | null {
  const { db, clock } = deps;
  const factor = findSecondFactor(db, owner.id);
  if (!factor?.confirmed_at) return null;
  const normal = normalCode(code);
  if (TOTP_CODE.test(normal)) {
    const step = stepOf(deps, owner, factor.secret_sealed, normal);
    return step !== null && spendStep(db, owner.id, step, null) ? "totp" : null;
  }
  const now = clock.now();
  const spent = db.transaction(() => {
    if (!spendRecoveryCode(db, owner.id, sha256Hex(normal), now)) return false;
    recordAudit(db, actor, null, "recovery_code.use", [owner.id], now);
    return true;
  })();
  return spent ? "recovery_code" : null;
}

/**
 * Removes an administrator's second factor and recovery codes, audited as `action`: removed by
 * its owner (after a code was checked, so a stolen session alone cannot) or reset by the
 * operator. False when there was none.
 */
export function removeSecondFactor(db: Database, adminId: string, action: "second_factor.disable" | "second_factor.reset", actor: Actor, now: Date): boolean {
  return db.transaction(() => {
    const removed = deleteSecondFactor(db, adminId);
    if (removed) recordAudit(db, actor, null, action, [adminId], now);
    return removed;
  })();
}

/** The operator's way out for a lost phone and lost recovery codes (`parley admin reset-mfa`). 404 for an unknown email. */
export function resetSecondFactor(db: Database, email: string, actor: Actor, now: Date): { email: string; hadOne: boolean } {
  const admin = findAdminByEmail(db, email.trim());
  if (!admin) throw new ApiError("not_found", `No administrator ${email.trim()}.`, { param: "email" });
  return { email: admin.email, hadOne: removeSecondFactor(db, admin.id, "second_factor.reset", actor, now) };
}
