import type { Mode } from "../tenancy";
import type { Principal } from "./auth";
import { ApiError } from "./errors";
import { carriesCsrfToken, cookieOf, httpOnlyCookie } from "./sessions";
import type { Scope } from "./scopes";

/**
 * Wearers' portal sessions as the auth path sees them (decision 147). The sessions
 * themselves (table, invites, sign-in) belong to src/modules/portal; this file holds only
 * what the plumbing needs. Apart from administrators' sessions: their own cookie, table and CSRF token.
 */

/** The cookie carrying a wearer's session token: HttpOnly, SameSite=Strict, Secure over HTTPS. */
export const PORTAL_COOKIE = "parley_me";
/**
 * Sent by the portal's pages with every API call: the portal's cookie is then the only one
 * looked at, so a browser that also holds an administrator's session still shows the wearer
 * their own view. Calls without it (an <audio> src) try the dashboard's cookie first.
 */
export const PORTAL_HEADER = "x-parley-portal";

/** A live wearer session: the end user, their tenant, what they may do, and the CSRF token writes carry. */
export type WearerSession = {
  readonly id: string;
  readonly endUserId: string;
  readonly tenant: { readonly projectId: string; readonly organizationId: string; readonly mode: Mode };
  readonly scopes: readonly Scope[];
  readonly csrfToken: string;
};

/** What the auth path asks of the portal's sessions: the live one behind a request's cookie. */
export interface WearerSessions {
  ofRequest(request: Request, now: Date): WearerSession | null;
}

/** The portal session token in a request's Cookie header, or null. */
export const portalTokenOf = (request: Request): string | null => cookieOf(request, PORTAL_COOKIE);

/** The Set-Cookie value that stores a portal token (an empty token with age 0 clears it). Path=/: the portal calls /v1. */
export const portalCookie = (token: string, maxAgeSeconds: number, secure: boolean): string => httpOnlyCookie(PORTAL_COOKIE, token, maxAgeSeconds, secure);

/**
 * A wearer's session acts with exactly the powers of a restricted key confined to their end
 * user (decision 147): the same Principal, so the one access rule (access.ts) confines it.
 */
export function principalOfWearer(session: WearerSession): Principal {
  return {
    credentialId: session.id,
    kind: "restricted",
    projectId: session.tenant.projectId,
    organizationId: session.tenant.organizationId,
    mode: session.tenant.mode,
    scopes: session.scopes,
    endUserId: session.endUserId,
    deviceId: null,
    recordingId: null,
    commandId: null,
    adminId: null,
    adminEmail: null,
    role: null,
    wearer: true,
  };
}

/**
 * The Principal of a request carrying a portal cookie: 401 when the session ended, 403 when
 * a state-changing request lacks its CSRF token. Null when the request has no portal cookie.
 */
export function wearerPrincipal(sessions: WearerSessions | undefined, request: Request, now: Date): Principal | null {
  if (!sessions || !portalTokenOf(request)) return null;
  const session = sessions.ofRequest(request, now);
  if (!session) throw new ApiError("unauthorized", "Your portal session has ended (signed out, idle too long or too old): sign in again.");
  if (!carriesCsrfToken(request, session)) throw new ApiError("forbidden", "This request changes state but lacks the session's CSRF token (X-CSRF-Token).");
  return principalOfWearer(session);
}
