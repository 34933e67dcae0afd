import { Elysia } from "elysia";
import type { Clock } from "../clock";
import { ApiError } from "./errors";
import { requestIdOf } from "./request-id";
import { bearerToken, type CredentialCache, type CredentialKind, type CredentialRow, type Mode, type Tenant } from "./credentials";
import type { Scope } from "./scopes";

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
};

/** Where a request came from: its req_ id and the client's address, as the audit log records them. */
export type RequestOrigin = { readonly requestId: string | null; readonly clientAddress: string | null };

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
  };
}

/**
 * Resolves `Authorization: Bearer ...` to a Principal for every route mounted after it
 * (401 when missing or not live). Rate limits were already counted before routing.
 */
export function authentication(deps: { credentials: CredentialCache; clock: Clock }) {
  // Unnamed on purpose: each module mounts its own copy, and a named plugin would be deduplicated away.
  return new Elysia()
    .derive({ as: "scoped" }, ({ request, set, server }) => {
      // Usually already looked up by the rate limiter; the header is read again only to say what is wrong.
      const row = deps.credentials.ofRequest(request, deps.clock.now());
      if (row) {
        // The cached Principal is shared; this request's copy adds where it came from (one small object a request).
        const origin: RequestOrigin = { requestId: requestIdOf(set) ?? null, clientAddress: server?.requestIP(request)?.address ?? null };
        return { principal: { ...principalOf(row), origin } as Principal };
      }
      if (!request.headers.has("authorization")) throw new ApiError("unauthorized", "No credential given: send Authorization: Bearer <key>.");
      if (!bearerToken(request)) throw new ApiError("unauthorized", "The Authorization header must be of the form 'Bearer <key>'.");
      throw new ApiError("unauthorized", "The credential is invalid, expired or revoked.");
    });
}

const API_KEY_KINDS: readonly CredentialKind[] = ["secret", "restricted"];

/** Whether an API key holds a scope (secret keys hold all); other credential kinds hold none. */
export function holdsScope(principal: Principal, scope: Scope): boolean {
  return API_KEY_KINDS.includes(principal.kind) && (principal.scopes === null || principal.scopes.includes(scope));
}

/**
 * The single permission check: API keys need the scope (secret keys hold all), other
 * token kinds only reach routes that name them. 403 otherwise.
 */
export function authorize(principal: Principal, scope: Scope, options: { tokens?: readonly CredentialKind[] } = {}): Principal {
  if (API_KEY_KINDS.includes(principal.kind)) {
    if (!holdsScope(principal, scope)) throw new ApiError("forbidden", `This key lacks the ${scope} scope.`);
    return principal;
  }
  if (options.tokens?.includes(principal.kind)) return principal;
  throw new ApiError("forbidden", `A ${principal.kind} token cannot call this endpoint.`);
}
