import type { Database } from "bun:sqlite";
import { Elysia } from "elysia";
import type { Clock } from "../clock";
import { sha256Hex } from "../crypto";
import type { Principal } from "./auth";
import type { Tenant } from "./credentials";
import { ApiError } from "./errors";

const KEY_FORMAT = /^[A-Za-z0-9_-]{1,255}$/;
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/** How long a duplicate waits for the first request of its key before answering 409. */
const IN_FLIGHT_WAIT_MS = 10_000;

type StoredRow = {
  credential_id: string | null;
  request_hash: string;
  state: "in_flight" | "done";
  response_status: number | null;
  response_body: string | null;
  created_at: string;
};

/** JSON with sorted keys, so the same payload always hashes the same. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
    return `{${entries
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`)
      .join(",")}}`;
  }
  return JSON.stringify(value ?? null);
}

/** The route option `idempotent`: `true`, or these when the default does not fit. */
export type IdempotentOptions = {
  /** The payload a retry must repeat: the JSON body (default), or the query of a raw-body route, whose body is a stream. */
  payload?: "body" | "query";
  /** What is kept of a success instead of the body as sent: for what must never be stored in clear (a token, a credential). */
  store?: (response: never) => unknown;
  /**
   * Rebuilds a replayed success from what `store` kept. It may throw: that error is today's
   * answer, not a replay, and is not stored.
   */
  replay?: (stored: never, ctx: never) => unknown;
};
export type IdempotentOption = true | IdempotentOptions;
/** What `replay` is given: the caller (the credential that stored the response) and the route's path parameters. */
export type ReplayContext<Params = Record<string, string>> = { principal: Principal; params: Params };

type HookContext = {
  request: Request;
  body?: unknown;
  query?: unknown;
  params: Record<string, string>;
  principal: Principal;
  set: { status?: number | string; headers: Record<string, string | number> };
};
type Claim = { ids: ClaimIds; store?: (response: never) => unknown };
type ClaimIds = [projectId: string, mode: string, operation: string, key: string];

/** The claim a request holds until its response is settled (a request, not the app, is the key: nothing outlives it). */
const claims = new WeakMap<Request, Claim>();

/**
 * Statuses whose response is never kept, so a retry runs afresh (spec 7, decision 004): 425
 * and 429 say "try again", and a 5xx may not happen again. Every other 4xx is replayed.
 */
export const isReplayable = (status: number) => status < 500 && status !== 425 && status !== 429;

/**
 * The `idempotent` route option (spec 8): `{ idempotent: true }` runs a create/trigger
 * operation at most once per Idempotency-Key. The same key and payload replay the stored
 * response, a different payload is 409 idempotency_key_conflict, and a duplicate that
 * arrives while the first is running waits for it instead of writing twice. Only the
 * credential that made the first request gets its replay: the response may hold what
 * another key of the project is not allowed to see, so any other credential gets 409.
 * Mount it in a module after `authentication`.
 *
 * @example
 * new Elysia().use(authentication(deps)).use(idempotency(deps))
 *   .post("/end-users", ({ body, set }) => { set.status = 201; return createEndUser(...) }, { idempotent: true })
 */
export function idempotency(deps: { db: Database; clock: Clock }) {
  // Unnamed, as authentication: each module mounts its own copy.
  return new Elysia().macro({
    idempotent(option: IdempotentOption) {
      const options = option === true ? {} : option;
      // Each hook names only what it reads: Elysia parses a body only for routes whose hooks
      // or handler read it, and a raw-body route must keep its stream.
      const beforeHandle =
        options.payload === "query"
          ? ({ request, query, params, principal, set }: HookContext) => claimOrReplay(deps, options, { request, params, principal, set }, query)
          : ({ request, body, params, principal, set }: HookContext) => claimOrReplay(deps, options, { request, params, principal, set }, body);
      return {
        beforeHandle: beforeHandle as never,
        mapResponse: (({ request, responseValue, set }: HookContext & { responseValue: unknown }) => settle(deps.db, request, set, responseValue)) as never,
      };
    },
  });
}

/** Before the handler: no key runs it; a stored response is replayed; otherwise the key is claimed for this request. */
async function claimOrReplay(
  deps: { db: Database; clock: Clock },
  options: IdempotentOptions,
  ctx: Omit<HookContext, "body" | "query">,
  payload: unknown,
): Promise<unknown> {
  const key = ctx.request.headers.get("idempotency-key");
  if (key === null) return undefined;
  if (!KEY_FORMAT.test(key)) {
    throw new ApiError("invalid_request", "Idempotency-Key must be 1-255 letters, digits, hyphens or underscores.", { param: "Idempotency-Key" });
  }
  const { db, clock } = deps;
  const { projectId, mode, credentialId } = ctx.principal;
  const operation = `${ctx.request.method} ${new URL(ctx.request.url).pathname}`;
  const requestHash = sha256Hex(canonical(payload ?? null));
  const ids: ClaimIds = [projectId, mode, operation, key];

  const waitUntil = Date.now() + IN_FLIGHT_WAIT_MS;
  for (;;) {
    const now = clock.now();
    db.query("DELETE FROM idempotency_keys WHERE project_id = ? AND mode = ? AND operation = ? AND key = ? AND created_at <= ?").run(
      ...ids,
      new Date(now.getTime() - IDEMPOTENCY_TTL_MS).toISOString(),
    );
    const claimed = db
      .query(
        `INSERT INTO idempotency_keys (project_id, mode, operation, key, credential_id, request_hash, state, created_at)
         VALUES (?, ?, ?, ?, ?, ?, 'in_flight', ?) ON CONFLICT DO NOTHING`,
      )
      .run(...ids, credentialId, requestHash, now.toISOString()).changes;
    if (claimed === 1) {
      claims.set(ctx.request, { ids, store: options.store });
      return undefined;
    }
    const row = db
      .query<StoredRow, ClaimIds>(
        "SELECT credential_id, request_hash, state, response_status, response_body, created_at FROM idempotency_keys WHERE project_id = ? AND mode = ? AND operation = ? AND key = ?",
      )
      .get(...ids);
    if (!row) continue;
    if (row.credential_id !== credentialId) {
      throw new ApiError("idempotency_key_conflict", "This Idempotency-Key was already used by another credential.", { param: "Idempotency-Key" });
    }
    if (row.request_hash !== requestHash) {
      throw new ApiError("idempotency_key_conflict", "This Idempotency-Key was already used with different parameters.", { param: "Idempotency-Key" });
    }
    if (row.state === "done") return replay(options, ctx, row);
    if (Date.now() > waitUntil) {
      throw new ApiError("idempotency_key_conflict", "A request with this Idempotency-Key is still in progress; retry shortly.", { param: "Idempotency-Key" });
    }
    await Bun.sleep(25);
  }
}

/** A stored error goes back as it was (spec 7); a stored success through the route's `replay`, which may refuse it with today's error. */
async function replay(options: IdempotentOptions, ctx: Omit<HookContext, "body" | "query">, row: StoredRow): Promise<unknown> {
  const status = row.response_status ?? 200;
  const stored = JSON.parse(row.response_body ?? "null") as never;
  const body = status < 400 && options.replay ? await options.replay(stored, { principal: ctx.principal, params: ctx.params } as never) : stored;
  ctx.set.status = status;
  ctx.set.headers["idempotent-replayed"] = "true";
  return body;
}

/** After the handler or the error renderer: the response is kept for replays, or the claim released so a retry runs. */
function settle(db: Database, request: Request, set: HookContext["set"], response: unknown): void {
  const claim = claims.get(request);
  if (!claim) return;
  claims.delete(request);
  const status = typeof set.status === "number" ? set.status : 200;
  if (!isReplayable(status)) {
    db.query("DELETE FROM idempotency_keys WHERE project_id = ? AND mode = ? AND operation = ? AND key = ?").run(...claim.ids);
    return;
  }
  const kept = status < 400 && claim.store ? claim.store(response as never) : response;
  db.query(
    "UPDATE idempotency_keys SET state = 'done', response_status = ?, response_body = ? WHERE project_id = ? AND mode = ? AND operation = ? AND key = ?",
  ).run(status, JSON.stringify(kept ?? null), ...claim.ids);
}

export type StoredResponse = { status: number; body: unknown };

/**
 * Rewrites the tenant's stored responses that name `id` in their path or body: the copies
 * an erasure must reach (decision 078). `rewrite` returns the replacement, or null to keep
 * one. The key stays claimed, so a retry still gets a replay and never runs twice.
 */
export function rewriteStoredResponses(db: Database, tenant: Tenant, id: string, rewrite: (stored: StoredResponse) => StoredResponse | null): void {
  const rows = db
    .query<{ operation: string; key: string; response_status: number; response_body: string }, [string, string, string, string]>(
      `SELECT operation, key, response_status, response_body FROM idempotency_keys
       WHERE project_id = ? AND mode = ? AND state = 'done' AND (instr(operation, ?) > 0 OR instr(response_body, ?) > 0)`,
    )
    .all(tenant.projectId, tenant.mode, id, id);
  const update = db.query("UPDATE idempotency_keys SET response_status = ?, response_body = ? WHERE project_id = ? AND mode = ? AND operation = ? AND key = ?");
  for (const row of rows) {
    const replacement = rewrite({ status: row.response_status, body: JSON.parse(row.response_body) });
    if (replacement) update.run(replacement.status, JSON.stringify(replacement.body), tenant.projectId, tenant.mode, row.operation, row.key);
  }
}

/** Scheduled purge of keys past their 24 hours (spec 8). */
export function purgeExpiredIdempotencyKeys(db: Database, now: Date): number {
  return db.query("DELETE FROM idempotency_keys WHERE created_at <= ?").run(new Date(now.getTime() - IDEMPOTENCY_TTL_MS).toISOString()).changes;
}

/**
 * At boot: claims left in flight by a process that died can never finish (one process
 * serves the database), so they are dropped and a retry runs the operation afresh.
 */
export function releaseAbandonedIdempotencyClaims(db: Database): number {
  return db.query("DELETE FROM idempotency_keys WHERE state = 'in_flight'").run().changes;
}
