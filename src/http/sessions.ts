import { constantTimeEqual, sha256Hex } from "../crypto";
import type { Mode } from "../tenancy";
import type { BreakGlassGrant } from "./auth";
import type { Role } from "./roles";

/**
 * Dashboard sessions as the auth path sees them (decision 094). The sessions themselves
 * (table, passwords, sign-in) belong to src/modules/admins, which hands Deps an
 * implementation of `DashboardSessions`; this file holds only what the plumbing needs.
 */

/** The cookie carrying a session's token: HttpOnly, SameSite=Strict, Secure over HTTPS. */
export const SESSION_COOKIE = "parley_session";
/** Every state-changing request of a session carries its CSRF token in this header. */
export const CSRF_HEADER = "x-csrf-token";

/** A live session, resolved from its cookie. */
export type DashboardSession = {
  readonly id: string;
  readonly adminId: string;
  readonly adminEmail: string;
  readonly role: Role;
  /** The project and mode the administrator acts in; null before one is chosen (a fresh install has no project). */
  readonly tenant: { readonly projectId: string; readonly organizationId: string; readonly mode: Mode } | null;
  readonly csrfToken: string;
  /**
   * PARLEY_REQUIRE_MFA is on and this local account has no second factor yet (decision 151):
   * until it enrols, only the session itself, sign-out and enrolment answer it.
   */
  readonly mustEnrolSecondFactor?: boolean;
  /** The open break-glass grants of this person in `tenant`, by end user (issue 32); absent for roles that need none. */
  readonly breakGlass?: ReadonlyMap<string, BreakGlassGrant>;
};

/** Why a session that must enrol a second factor is refused everything else (403). */
export const ENROL_SECOND_FACTOR_FIRST = "This appliance requires a second factor: set one up (Account) before doing anything else.";

/** What the auth path and the rate limiter ask of the sessions: the live session behind a request's cookie, looked up once per request. */
export interface DashboardSessions {
  ofRequest(request: Request, now: Date): DashboardSession | null;
}

/** The value of cookie `name` in a request's Cookie header, or null. */
export function cookieOf(request: Request, name: string): string | null {
  const header = request.headers.get("cookie");
  if (!header) return null;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim() || null;
  }
  return null;
}

/** The session token in a request's Cookie header, or null. */
export const sessionTokenOf = (request: Request): string | null => cookieOf(request, SESSION_COOKIE);

/** The CSRF token bound to a session token: derived, so nothing more is stored, and unreadable without the HttpOnly cookie. */
export function csrfTokenOf(sessionToken: string): string {
  return sha256Hex(`parley:csrf:${sessionToken}`);
}

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/** Whether a request may change state: every method but GET, HEAD and OPTIONS. */
export const changesState = (request: Request): boolean => !SAFE_METHODS.has(request.method);

/** Whether a state-changing request carries its session's CSRF token (safe methods need none); dashboard and portal sessions alike. */
export function carriesCsrfToken(request: Request, session: { readonly csrfToken: string }): boolean {
  if (!changesState(request)) return true;
  const sent = request.headers.get(CSRF_HEADER);
  return sent !== null && constantTimeEqual(sent, session.csrfToken);
}

/** Whether the browser reached us over HTTPS (directly, or through a proxy that says so): the cookie is then Secure. */
export function isHttps(request: Request): boolean {
  return new URL(request.url).protocol === "https:" || request.headers.get("x-forwarded-proto") === "https";
}

/** The Set-Cookie value that stores a session token in cookie `name` (an empty token with age 0 clears it); Path=/, HttpOnly, SameSite=Strict. */
export function httpOnlyCookie(name: string, token: string, maxAgeSeconds: number, secure: boolean): string {
  return `${name}=${token}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${maxAgeSeconds}${secure ? "; Secure" : ""}`;
}

/** The Set-Cookie value that stores a dashboard session token in the browser (an empty token with age 0 clears it). */
export const sessionCookie = (token: string, maxAgeSeconds: number, secure: boolean): string => httpOnlyCookie(SESSION_COOKIE, token, maxAgeSeconds, secure);

/** A session row's two clocks: when it began and when it was last seen. */
type SessionTimes = { readonly created_at: string; readonly last_seen_at: string };

/**
 * How long a session lives, for administrators' and wearers' sessions alike: it ends when
 * idle for PARLEY_SESSION_IDLE_MINUTES or older than PARLEY_SESSION_MAX_HOURS.
 */
export class SessionLifetime {
  /** last_seen_at is written at most this often: a page polling every few seconds must not write on every request. */
  static readonly TOUCH_EVERY_MS = 60_000;

  constructor(private readonly limits: { readonly sessionIdleMinutes: number; readonly sessionMaxHours: number }) {}

  private get idleMs(): number {
    return this.limits.sessionIdleMinutes * 60_000;
  }

  private get maxMs(): number {
    return this.limits.sessionMaxHours * 3_600_000;
  }

  /** How long the browser keeps the cookie: the absolute timeout (the server ends it sooner when idle). */
  get cookieMaxAgeSeconds(): number {
    return Math.floor(this.maxMs / 1000);
  }

  /** Whether a session is over at `now`: idle too long, or too old. */
  isOver(row: SessionTimes, now: Date): boolean {
    const at = now.getTime();
    return at - Date.parse(row.last_seen_at) >= this.idleMs || at - Date.parse(row.created_at) >= this.maxMs;
  }

  /** Whether a live session's last_seen_at is due to be written. */
  dueForTouch(row: SessionTimes, now: Date): boolean {
    return now.getTime() - Date.parse(row.last_seen_at) >= SessionLifetime.TOUCH_EVERY_MS;
  }

  /** Sessions ended, or last seen, before this can never work again: purged. */
  purgeBefore(now: Date): Date {
    return new Date(now.getTime() - Math.max(this.idleMs, this.maxMs));
  }
}
