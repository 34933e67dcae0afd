import type { Clock } from "../../clock";
import { ApiError } from "../../http/errors";

type Failures = { count: number; last: number };

const emailKey = (email: string) => `email:${email.trim().toLowerCase()}`;
const addressKey = (address: string) => `address:${address}`;

/** How many more failures an address may make than an account: an office shares one address. */
const ADDRESS_FACTOR = 4;

/**
 * Failed sign-ins counted per email and per client address (decision 094). After
 * `maxFailures` failures for an email (four times as many from an address) within the
 * lockout window, sign-in is refused for that window from the last failure, even with the
 * right password. In memory, as the API's rate limits are (decision 003): a restart forgives.
 */
export class LoginThrottle {
  private readonly failures = new Map<string, Failures>();

  constructor(
    private readonly limits: { maxFailures: number; lockoutMinutes: number },
    private readonly clock: Clock,
  ) {}

  /**
   * Admits one sign-in attempt (429 while the email or the address is locked out) and counts
   * it as failed until `succeeded` says otherwise: a password check takes a while, and
   * attempts sent in parallel must not all pass the check before any is counted.
   */
  attempt(email: string, address: string): void {
    const now = this.clock.now().getTime();
    for (const [key, max] of this.keys(email, address)) {
      const f = this.live(key, now);
      if (f && f.count >= max) {
        const retryAfter = Math.max(1, Math.ceil((f.last + this.windowMs - now) / 1000));
        throw new ApiError("rate_limited", `Too many failed sign-ins: try again in ${Math.ceil(retryAfter / 60)} minute(s).`, {
          headers: { "retry-after": String(retryAfter) },
        });
      }
    }
    if (this.failures.size > 10_000) this.forgetOld(now);
    for (const [key] of this.keys(email, address)) {
      const f = this.live(key, now) ?? { count: 0, last: now };
      this.failures.set(key, { count: f.count + 1, last: now });
    }
  }

  /** The attempt was right: the account's failures are forgiven, and this attempt no longer counts against the address. */
  succeeded(email: string, address: string): void {
    this.failures.delete(emailKey(email));
    this.uncount(addressKey(address));
  }

  /**
   * The attempt was right but the sign-in is not complete (a password whose second factor is
   * owed, decision 151): it no longer counts, and the account's earlier failures stay, so a
   * known password does not wipe the count of guessed codes.
   */
  passed(email: string, address: string): void {
    this.uncount(emailKey(email));
    this.uncount(addressKey(address));
  }

  private uncount(key: string): void {
    const f = this.failures.get(key);
    if (f && f.count > 1) f.count--;
    else this.failures.delete(key);
  }

  private get windowMs(): number {
    return this.limits.lockoutMinutes * 60_000;
  }

  private keys(email: string, address: string): [string, number][] {
    return [
      [emailKey(email), this.limits.maxFailures],
      [addressKey(address), this.limits.maxFailures * ADDRESS_FACTOR],
    ];
  }

  private live(key: string, now: number): Failures | null {
    const f = this.failures.get(key);
    return f && now - f.last < this.windowMs ? f : null;
  }

  private forgetOld(now: number): void {
    for (const [key, f] of this.failures) if (now - f.last >= this.windowMs) this.failures.delete(key);
  }
}
