import { sha256Hex } from "../../crypto";
import { newSecret } from "../../ids";
import type { Admin } from "./store";

/** How long a password stays good for its second step: time to open the app and type a code. */
export const CHALLENGE_TTL_MS = 5 * 60_000;
/** Far above the sign-ins in flight on an appliance; past it the expired ones are swept first. */
const SWEEP_ABOVE = 1_000;

/**
 * Sign-ins whose password was right and whose second factor is owed (decision 151): a random
 * challenge, handed to the browser in place of a session, names the administrator for the
 * second step. In memory, as the sign-in throttle is: a restart asks for the password again.
 */
export class SignInChallenges {
  private readonly open = new Map<string, { admin: Admin; expiresAt: number }>();

  /** A new challenge for `admin`, good for CHALLENGE_TTL_MS. */
  issue(admin: Admin, now: Date): string {
    const at = now.getTime();
    if (this.open.size > SWEEP_ABOVE) for (const [key, c] of this.open) if (c.expiresAt <= at) this.open.delete(key);
    const challenge = newSecret("mfc_");
    this.open.set(sha256Hex(challenge), { admin, expiresAt: at + CHALLENGE_TTL_MS });
    return challenge;
  }

  /** The administrator a live challenge names, or null (unknown, spent or expired). */
  find(challenge: string, now: Date): Admin | null {
    const found = this.open.get(sha256Hex(challenge));
    return found && found.expiresAt > now.getTime() ? found.admin : null;
  }

  /** Ends a challenge: its sign-in is complete. */
  spend(challenge: string): void {
    this.open.delete(sha256Hex(challenge));
  }
}
