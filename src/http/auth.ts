import { Elysia } from "elysia";
import type { Clock } from "../clock";
import { ApiError } from "./errors";
import { requestIdOf } from "./request-id";
import { bearerToken, type CredentialCache, type CredentialKind, type CredentialRow, type Mode, type Tenant } from "./credentials";
import { isContent, opensWithContent, type Role, readsContent, roleHolds } from "./roles";
import type { Scope } from "./scopes";
import { carriesCsrfToken, changesState, type DashboardSession, type DashboardSessions, ENROL_SECOND_FACTOR_FIRST, sessionTokenOf } from "./sessions";
import { PORTAL_HEADER, type WearerSessions, wearerPrincipal } from "./wearer-sessions";

/** Who is calling: the credential behind the Authorization header, resolved once per request; shared between requests, so read-only. */
export type Principal = Readonly<Tenant> & {
  readonly credentialId: string;
  readonly kind: CredentialKind;
  readonly organizationId: string;
  /** null means every scope (secret keys, and tokens whose reach is fixed by their kind). */
  readonly scopes: readonly string[] | null;
  readonly endUserId: string | null;
  readonly deviceId: string | null;
  readonly recordingId: string | null;
  readonly commandId: string | null;
  /** The request this principal acts in (for the audit log); absent outside a request (CLI, jobs). */
  readonly origin?: RequestOrigin;
  /** The administrator acting through a dashboard session (decision 094), for attribution; null for every other credential. */
  readonly adminId?: string | null;
  readonly adminEmail?: string | null;
  /** A wearer's portal session (decision 147): audited as the wearer (their end user), not as a key. */
  readonly wearer?: boolean;
  /** A dashboard session's role (issue 32); null for every other credential, whose scopes say what it may do. */
  readonly role?: Role | null;
  /**
   * The open break-glass grants of a session's person, by the end user each opens (issue 32):
   * read by the access rule, and by the audit trail to record each read's reason.
   */
  readonly breakGlass?: ReadonlyMap<string, BreakGlassGrant>;
  /**
   * Set on the Principal authorize() hands a content route when a role without content reaches
   * it through break-glass: it then sees only the content of the end users in `breakGlass`.
   */
  readonly viaBreakGlass?: boolean;
};

/** One open break-glass grant: its id and the reason given when it was opened. */
export type BreakGlassGrant = { readonly id: string; readonly reason: string; readonly expiresAt: string };

/** Where a request came from: its req_ id and the client's address, as the audit log records them. */
export type RequestOrigin = { readonly requestId: string | null; readonly clientAddress: string | null };

/** A request's origin, from its handler's context: the req_ id set on the response and the caller's address (null when not listening). */
export function requestOrigin(
  request: Request,
  set: { headers: Record<string, unknown> },
  server: { requestIP(r: Request): { address: string } | null } | null | undefined,
): RequestOrigin {
  return { requestId: requestIdOf(set) ?? null, clientAddress: server?.requestIP(request)?.address ?? null };
}

// Cached credential rows are the same object from request to request (credentials.ts), so
// their Principal is built once. Principals are never mutated. Keyed by the row, which
// belongs to one Deps' cache, so no app sees another's entries.
const principalOfRow = new WeakMap<CredentialRow, Principal>();

function principalOf(row: CredentialRow): Principal {
  let principal = principalOfRow.get(row);
  if (!principal) principalOfRow.set(row, (principal = toPrincipal(row)));
  return principal;
}

function toPrincipal(row: CredentialRow): Principal {
  return {
    credentialId: row.id,
    kind: row.kind,
    projectId: row.project_id,
    organizationId: row.organization_id,
    mode: row.mode as Mode,
    scopes: row.scopes ? (JSON.parse(row.scopes) as string[]) : null,
    endUserId: row.end_user_id,
    deviceId: row.device_id,
    recordingId: row.recording_id,
    commandId: row.command_id,
    adminId: null,
    adminEmail: null,
  };
}

/**
 * A dashboard session acts with exactly the powers of a secret key in the project and mode it
 * selected (decision 094): the same Principal, so every route, scope and access rule applies
 * unchanged. Its credential id is the session's, so idempotency keys and rate limits are its own.
 */
export function principalOfSession(session: DashboardSession & { tenant: NonNullable<DashboardSession["tenant"]> }): Principal {
  return {
    credentialId: session.id,
    kind: "secret",
    projectId: session.tenant.projectId,
    organizationId: session.tenant.organizationId,
    mode: session.tenant.mode,
    scopes: null,
    endUserId: null,
    deviceId: null,
    recordingId: null,
    commandId: null,
    adminId: session.adminId,
    adminEmail: session.adminEmail,
    role: session.role,
    breakGlass: session.breakGlass,
  };
}

/**
 * The Principal of a request that carries no Authorization header but a dashboard session
 * cookie: 401 when the session ended, 403 when a state-changing request lacks the session's
 * CSRF token or no project is selected yet. Null when the request has no session cookie.
 */
function sessionPrincipal(sessions: DashboardSessions | undefined, request: Request, now: Date): Principal | null {
  if (!sessions || !sessionTokenOf(request)) return null;
  const session = sessions.ofRequest(request, now);
  if (!session) throw new ApiError("unauthorized", "Your dashboard session has ended (signed out, idle too long or too old): sign in again.");
  if (!carriesCsrfToken(request, session)) throw new ApiError("forbidden", "This request changes state but lacks the session's CSRF token (X-CSRF-Token).");
  if (session.mustEnrolSecondFactor) throw new ApiError("forbidden", ENROL_SECOND_FACTOR_FIRST);
  const { tenant } = session;
  if (!tenant) throw new ApiError("forbidden", "Choose a project first: the dashboard acts in one project and mode at a time.");
  return principalOfSession({ ...session, tenant });
}

/**
 * Resolves `Authorization: Bearer ...` (or, without one, a dashboard session cookie) to a
 * Principal for every route mounted after it (401 when missing or not live). Rate limits were already counted before routing.
 */
export function authentication(deps: { credentials: CredentialCache; clock: Clock; dashboardSessions?: DashboardSessions; portalSessions?: WearerSessions }) {
  // Unnamed on purpose: each module mounts its own copy, and a named plugin would be deduplicated away.
  return new Elysia().derive({ as: "scoped" }, ({ request, set, server }) => {
    // Usually already looked up by the rate limiter; the header is read again only to say what is wrong.
    const now = deps.clock.now();
    const origin = (): RequestOrigin => requestOrigin(request, set, server);
    const row = deps.credentials.ofRequest(request, now);
    // The cached Principal is shared; this request's copy adds where it came from (one small object a request).
    if (row) return { principal: { ...principalOf(row), origin: origin() } as Principal };
    if (!request.headers.has("authorization")) {
      // A key, when one is sent, is the only credential looked at: a cookie beside it adds nothing.
      // The portal's pages name themselves, so its cookie alone counts there (decision 147).
      const principal = request.headers.has(PORTAL_HEADER)
        ? wearerPrincipal(deps.portalSessions, request, now)
        : (sessionPrincipal(deps.dashboardSessions, request, now) ?? wearerPrincipal(deps.portalSessions, request, now));
      if (principal) return { principal: { ...principal, origin: origin() } as Principal };
      throw new ApiError("unauthorized", "No credential given: send Authorization: Bearer <key>.");
    }
    if (!bearerToken(request)) throw new ApiError("unauthorized", "The Authorization header must be of the form 'Bearer <key>'.");
    throw new ApiError("unauthorized", "The credential is invalid, expired or revoked.");
  });
}

const API_KEY_KINDS: readonly CredentialKind[] = ["secret", "restricted"];

/** Whether an API key holds a scope (secret keys hold all, a session what its role holds); other credential kinds hold none. */
export function holdsScope(principal: Principal, scope: Scope): boolean {
  return (
    API_KEY_KINDS.includes(principal.kind) &&
    (principal.scopes === null || principal.scopes.includes(scope)) &&
    (!principal.role || roleHolds(principal.role, scope))
  );
}

/** The refusal of content to a role that reads it only through break-glass (issue 32): it says how to get it. */
export const BREAK_GLASS_NEEDED = (role: Role) =>
  `The ${role} role does not see conversation content (audio, transcripts, summaries, search, Ask): open break-glass for the end user, with a reason, on the Compliance page first.`;

/**
 * The single permission check: API keys need the scope (secret keys hold all), a dashboard
 * session what its role holds (decision 136), other token kinds only reach routes that name
 * them. 403 otherwise. `content` marks a route that reads content under a scope that also
 * covers metadata (audio, search): a role without content reaches content only through an
 * open break-glass grant, and then sees only its end users' (access.ts).
 */
export function authorize(principal: Principal, scope: Scope, options: { tokens?: readonly CredentialKind[]; content?: boolean } = {}): Principal {
  if (API_KEY_KINDS.includes(principal.kind)) {
    const { role } = principal;
    if (role && !readsContent(role)) {
      const open = Boolean(principal.breakGlass?.size);
      if (isContent(scope, options.content)) {
        if (!open) throw new ApiError("forbidden", BREAK_GLASS_NEEDED(role));
        return { ...principal, viaBreakGlass: true };
      }
      if (open && !roleHolds(role, scope) && opensWithContent(scope)) return { ...principal, viaBreakGlass: true };
    }
    if (!holdsScope(principal, scope))
      throw new ApiError("forbidden", role ? `The ${role} role cannot do this (it needs ${scope}).` : `This key lacks the ${scope} scope.`);
    return principal;
  }
  if (options.tokens?.includes(principal.kind)) return principal;
  throw new ApiError("forbidden", `A ${principal.kind} token cannot call this endpoint.`);
}

/**
 * A state-changing request from another site is refused (403) when the browser names its
 * origin: sign-in and setup have no session yet, so no CSRF token, and this keeps another
 * site from signing a browser in to an account of its choosing.
 */
export function refuseCrossSiteWrites(request: Request): void {
  if (!changesState(request)) return;
  const origin = request.headers.get("origin");
  if (!origin || origin === new URL(request.url).origin) return;
  // Behind a proxy the URL we see is not the browser's; its Host header still is.
  const host = hostOf(origin);
  if (host === null || host !== request.headers.get("host")) throw new ApiError("forbidden", "Cross-site requests are refused.");
}

/** The host of an Origin header, or null for "null" (a sandboxed or opaque origin) and anything unparsable. */
function hostOf(origin: string): string | null {
  try {
    return new URL(origin).host;
  } catch {
    return null;
  }
}

/**
 * The routes only an administrator's dashboard session reaches, never an API key (key
 * management: spec 5 rule 2, decision 094): 401 without a live session, 403 for a
 * state-changing request without its CSRF token or from another site, and 403 for a role
 * not among `roles` when given (decision 136).
 */
export function dashboardSessionOnly(
  deps: { clock: Clock; dashboardSessions: DashboardSessions },
  options: { beforeSecondFactor?: boolean; roles?: readonly Role[] } = {},
) {
  return new Elysia().derive({ as: "scoped" }, ({ request }) => {
    refuseCrossSiteWrites(request);
    const session = sessionTokenOf(request) ? deps.dashboardSessions.ofRequest(request, deps.clock.now()) : null;
    if (!session) throw new ApiError("unauthorized", "Sign in to the dashboard first: this is managed only there.");
    if (!carriesCsrfToken(request, session)) throw new ApiError("forbidden", "This request changes state but lacks the session's CSRF token (X-CSRF-Token).");
    // Only the session itself, sign-out and enrolment (`beforeSecondFactor`) answer a session that must enrol first.
    if (session.mustEnrolSecondFactor && !options.beforeSecondFactor) throw new ApiError("forbidden", ENROL_SECOND_FACTOR_FIRST);
    if (options.roles) requireRole(session, options.roles);
    return { session };
  });
}

/** 403 unless the session's role is one of `roles`. */
export function requireRole(session: { readonly role: Role }, roles: readonly Role[]): void {
  if (!roles.includes(session.role)) throw new ApiError("forbidden", `The ${session.role} role cannot do this: it takes ${roles.join(" or ")}.`);
}
