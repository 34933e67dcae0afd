import type { Clock } from "../clock";
import { type CredentialCache, uploadCredentialOfRequest } from "./credentials";
import { ApiError } from "./errors";
import { type DashboardSessions, sessionTokenOf } from "./sessions";
import { portalTokenOf, type WearerSessions } from "./wearer-sessions";

type Window = { start: number; count: number };
type Buckets = { second: Window; minute: Window };

/**
 * Fixed-window limits per caller (spec 8: 100/s and 1,000/min per key). A limit of 0
 * turns that window off. In memory: a restart forgives everyone, which is acceptable
 * for one appliance process.
 */
export class RateLimiter {
  private buckets = new Map<string, Buckets>();

  constructor(
    private limits: { perSecond: number; perMinute: number },
    private clock: Clock,
  ) {}

  /**
   * Counts one request, writes the X-RateLimit-* headers and throws 429 when over a limit.
   * With `count: false` it only writes the caller's headers as they stand (a dashboard file:
   * see `countRequest`).
   */
  check(key: string, headers: Record<string, string>, { count = true } = {}): void {
    const { perSecond, perMinute } = this.limits;
    if (perSecond === 0 && perMinute === 0) return;
    const now = this.clock.now().getTime();
    const b = this.bucketFor(key, now);
    const sec = Math.floor(now / 1000) * 1000;
    const min = Math.floor(now / 60_000) * 60_000;
    if (b.second.start !== sec) b.second = { start: sec, count: 0 };
    if (b.minute.start !== min) b.minute = { start: min, count: 0 };
    if (count) {
      b.second.count++;
      b.minute.count++;
    }

    const overSecond = perSecond > 0 && b.second.count > perSecond;
    const overMinute = perMinute > 0 && b.minute.count > perMinute;
    // A 429 describes the window that refused it (the minute when both did: it ends later,
    // as Retry-After says); otherwise the minute window when it is on, the one clients plan against.
    const refusedBySecond = overSecond && !overMinute;
    const [limit, window, length] = refusedBySecond || perMinute === 0 ? [perSecond, b.second, 1000] : [perMinute, b.minute, 60_000];
    const resetAt = window.start + length;
    headers["x-ratelimit-limit"] = String(limit);
    headers["x-ratelimit-remaining"] = String(Math.max(0, limit - window.count));
    headers["x-ratelimit-reset"] = String(Math.ceil(resetAt / 1000));
    if (overSecond || overMinute) {
      const retryAfter = String(Math.max(1, Math.ceil((resetAt - now) / 1000)));
      throw new ApiError("rate_limited", `Too many requests: the limit is ${overMinute ? `${perMinute} per minute` : `${perSecond} per second`}.`, {
        headers: { "retry-after": retryAfter },
      });
    }
  }

  private bucketFor(key: string, now: number): Buckets {
    let b = this.buckets.get(key);
    if (!b) {
      if (this.buckets.size > 10_000) this.forgetIdle(now);
      b = { second: { start: 0, count: 0 }, minute: { start: 0, count: 0 } };
      this.buckets.set(key, b);
    }
    return b;
  }

  private forgetIdle(now: number): void {
    for (const [k, b] of this.buckets) if (b.minute.start + 60_000 < now) this.buckets.delete(k);
  }
}

export type RequestCounting = {
  credentials: CredentialCache;
  clock: Clock;
  rateLimiter: RateLimiter;
  dashboardSessions?: DashboardSessions;
  portalSessions?: WearerSessions;
};

/**
 * Counts a request before routing and body parsing, so every response (401, 404 and
 * malformed-JSON 400 included) carries the X-RateLimit-* headers (spec 8). Callers are
 * counted per credential: the Authorization header's, or for a pre-signed PUT the upload
 * token in its path (devices behind one NAT share an address, and one noisy client must
 * not throttle the others' uploads). Requests with no usable credential count per
 * address, so guessing keys or upload tokens is throttled too. Called by beforeRouting;
 * `clientAddress` is asked only for those.
 */
export function countRequest(deps: RequestCounting, request: Request, headers: Record<string, unknown>, clientAddress: () => string): void {
  const now = deps.clock.now();
  const row = deps.credentials.ofRequest(request, now) ?? uploadCredentialOfRequest(deps.credentials, request, now);
  // A dashboard session counts as its own caller, as a key does (decision 094).
  const session = !row && sessionTokenOf(request) ? deps.dashboardSessions?.ofRequest(request, now) : null;
  // So does a wearer's portal session (decision 147).
  const wearer = !row && !session && portalTokenOf(request) ? deps.portalSessions?.ofRequest(request, now) : null;
  const caller = row?.id ?? session?.id ?? wearer?.id ?? `anon:${clientAddress()}`;
  deps.rateLimiter.check(caller, headers as Record<string, string>, { count: !isPageFile(request) });
}

/**
 * A file of the dashboard's or the portal's page (GET /dashboard/app.js, /me/sw.js; not their
 * /api): the same embedded bytes for everyone, served from memory. One page load fetches
 * dozens, so counting them would spend a session's 100 a second on its own stylesheets and
 * modules; they carry the caller's headers (spec 8: every response) without counting.
 */
function isPageFile(request: Request): boolean {
  if (request.method !== "GET" && request.method !== "HEAD") return false;
  const path = new URL(request.url).pathname;
  return PAGE_FILES.test(path) && !PAGE_APIS.test(path);
}

const PAGE_FILES = /^\/(dashboard|me)(\/|$)/;
const PAGE_APIS = /^\/(dashboard|me)\/api(\/|$)/;
