import type { Database } from "bun:sqlite";
import type { Clock } from "../clock";
import { sha256Hex } from "../crypto";
import type { Principal } from "./auth";
import type { Tenant } from "./credentials";
import { ApiError, errorBody } from "./errors";
import { requestIdOf } from "./request-id";

const KEY_FORMAT = /^[A-Za-z0-9_-]{1,255}$/;
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/** How long a duplicate waits for the first request of its key before answering 409. */
const IN_FLIGHT_WAIT_MS = 10_000;

type IdempotentContext = {
  request: Request;
  body: unknown;
  principal: Principal;
  set: { status?: number | string; headers: Record<string, string | number> };
};

type StoredRow = { credential_id: string | null; request_hash: string; state: "in_flight" | "done"; response_status: number | null; response_body: string | null; created_at: string };

/** JSON with sorted keys, so the same payload always hashes the same. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
    return `{${entries.sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(",")}}`;
  }
  return JSON.stringify(value ?? null);
}

/**
 * Runs a create/trigger operation at most once per Idempotency-Key (spec 8): the same key
 * and payload replay the stored response (4xx included), a different payload is 409
 * idempotency_key_conflict, 5xx results are not kept, and a duplicate that arrives while
 * the first is running waits for it instead of writing twice. Only the credential that
 * made the first request gets its replay: the response may hold what another key of the
 * project is not allowed to see, so any other credential gets 409.
 */
export async function idempotent<T>(deps: { db: Database; clock: Clock }, ctx: IdempotentContext, run: () => T | Promise<T>): Promise<T> {
  const key = ctx.request.headers.get("idempotency-key");
  if (key === null) return run();
  if (!KEY_FORMAT.test(key)) {
    throw new ApiError("invalid_request", "Idempotency-Key must be 1-255 letters, digits, hyphens or underscores.", { param: "Idempotency-Key" });
  }
  const { db, clock } = deps;
  const { projectId, mode, credentialId } = ctx.principal;
  const operation = `${ctx.request.method} ${new URL(ctx.request.url).pathname}`;
  const requestHash = sha256Hex(canonical(ctx.body ?? null));
  const ids: [string, string, string, string] = [projectId, mode, operation, key];

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
    if (claimed === 1) break;
    const row = db
      .query<StoredRow, [string, string, string, string]>(
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
    if (row.state === "done") {
      ctx.set.status = row.response_status ?? 200;
      ctx.set.headers["idempotent-replayed"] = "true";
      return JSON.parse(row.response_body ?? "null") as T;
    }
    if (Date.now() > waitUntil) {
      throw new ApiError("idempotency_key_conflict", "A request with this Idempotency-Key is still in progress; retry shortly.", { param: "Idempotency-Key" });
    }
    await Bun.sleep(25);
  }

  const finish = (status: number, body: unknown) =>
    db.query("UPDATE idempotency_keys SET state = 'done', response_status = ?, response_body = ? WHERE project_id = ? AND mode = ? AND operation = ? AND key = ?").run(
      status,
      JSON.stringify(body ?? null),
      ...ids,
    );
  try {
    const result = await run();
    finish(Number(ctx.set.status ?? 200), result);
    return result;
  } catch (err) {
    if (err instanceof ApiError && err.status < 500) finish(err.status, errorBody(err, requestIdOf(ctx.set)));
    else db.query("DELETE FROM idempotency_keys WHERE project_id = ? AND mode = ? AND operation = ? AND key = ?").run(...ids);
    throw err;
  }
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
