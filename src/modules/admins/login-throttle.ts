import type { Clock } from "../../clock";
import { ApiError } from "../../http/errors";

type Failures = { count: number; last: number };

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

  /** 429 when the email or the address is locked out. */
  check(email: string, address: string): void {
    const now = this.clock.now().getTime();
    for (const [key, max] of this.keys(email, address)) {
      const f = this.live(key, now);
      if (f && f.count >= max) {
        const retryAfter = Math.max(1, Math.ceil((f.last + this.windowMs - now) / 1000));
        throw new ApiError("rate_limited", `Too many failed sign-ins: try again in ${Math.ceil(retryAfter / 60)} minute(s).`, { headers: { "retry-after": String(retryAfter) } });
      }
    }
  }

  failed(email: string, address: string): void {
    const now = this.clock.now().getTime();
    if (this.failures.size > 10_000) this.forgetOld(now);
    for (const [key] of this.keys(email, address)) {
      const f = this.live(key, now) ?? { count: 0, last: now };
      this.failures.set(key, { count: f.count + 1, last: now });
    }
  }

  /** A successful sign-in forgives the account's failures (not the address's: one right password must not unlock guessing at others). */
  succeeded(email: string): void {
    this.failures.delete(`email:${email.trim().toLowerCase()}`);
  }

  private get windowMs(): number {
    return this.limits.lockoutMinutes * 60_000;
  }

  private keys(email: string, address: string): [string, number][] {
    return [
      [`email:${email.trim().toLowerCase()}`, this.limits.maxFailures],
      [`address:${address}`, this.limits.maxFailures * ADDRESS_FACTOR],
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
