import type { Database, Statement } from "bun:sqlite";
import { hintOf, sha256Hex } from "../crypto";
import { newId, newSecret } from "../ids";
import type { Mode, Tenant } from "../tenancy";

/** Kept for callers written before src/tenancy.ts; new code imports them from there. */
export type { Mode, Tenant };

export type CredentialKind = "secret" | "restricted" | "device" | "upload" | "reset";

/** A live credential as the auth path needs it: only the columns a caller reads. */
export type CredentialRow = {
  id: string;
  kind: CredentialKind;
  project_id: string;
  organization_id: string;
  mode: Mode;
  scopes: string | null;
  end_user_id: string | null;
  device_id: string | null;
  recording_id: string | null;
  command_id: string | null;
  expires_at: string | null;
  used_at: string | null;
};

const TOKEN_PREFIX: Record<CredentialKind, (mode: Mode) => string> = {
  secret: (m) => `sk_${m}_`,
  restricted: (m) => `rk_${m}_`,
  device: () => "dtok_",
  upload: () => "up_",
  reset: () => "rct_",
};

const ID_PREFIX: Record<CredentialKind, string> = { secret: "key_", restricted: "key_", device: "dtk_", upload: "upt_", reset: "rcc_" };

export type IssueCredential = Tenant & {
  kind: CredentialKind;
  name?: string | null;
  scopes?: readonly string[] | null;
  endUserId?: string | null;
  deviceId?: string | null;
  recordingId?: string | null;
  commandId?: string | null;
  expiresAt?: Date | null;
  now: Date;
};

/** Creates a credential and returns its full value: the only time it exists outside the client. */
export function issueCredential(db: Database, c: IssueCredential): { id: string; token: string; hint: string } {
  const token = newSecret(TOKEN_PREFIX[c.kind](c.mode));
  const id = newId(ID_PREFIX[c.kind], c.now.getTime());
  const hint = hintOf(token);
  db.query(
    `INSERT INTO credentials (id, token_hash, kind, project_id, mode, hint, name, scopes, end_user_id, device_id,
       recording_id, command_id, expires_at, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    id,
    sha256Hex(token),
    c.kind,
    c.projectId,
    c.mode,
    hint,
    c.name ?? null,
    c.scopes ? JSON.stringify(c.scopes) : null,
    c.endUserId ?? null,
    c.deviceId ?? null,
    c.recordingId ?? null,
    c.commandId ?? null,
    c.expiresAt?.toISOString() ?? null,
    c.now.toISOString(),
  );
  return { id, token, hint };
}

/**
 * How often another process's commits are looked for. Reading PRAGMA data_version on every
 * request was a tenth of a cached request's cost; once a millisecond, a revocation by another
 * process is seen by every request that starts a millisecond or more after its commit.
 */
const DATA_VERSION_INTERVAL_MS = 1;

/** Far above any fleet this appliance serves; past it the cache starts over rather than grow. */
const MAX_CACHED_CREDENTIALS = 100_000;

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/** The bearer value of a request's Authorization header, or undefined when absent or malformed. */
export function bearerToken(request: Request): string | undefined {
  return request.headers.get("authorization")?.match(BEARER)?.[1];
}

/**
 * Live credentials by token hash, one cache per connection, built with Deps (boot.ts), so a
 * request's credential usually costs a hash and a Map lookup instead of two reads (decision
 * 008). Never stale by more than a millisecond:
 * - every UPDATE or DELETE of credentials in this process calls forget() (the writers below
 *   take a CredentialStore for that; an INSERT needs not: misses are not cached);
 * - PRAGMA data_version changes when another connection commits (the `parley keys revoke`
 *   CLI in another process); it is read at most every DATA_VERSION_INTERVAL_MS, and a
 *   change drops the whole cache;
 * - expiry is checked on every use, against the clock of the request.
 */
export class CredentialCache {
  private readonly rows = new Map<string, CredentialRow>();
  private dataVersion = -1;
  private checkedAt = -Infinity;
  private readonly dataVersionQuery: Statement<{ data_version: number }, []>;
  /** A project never changes organization, so this lookup of the auth path is cached for good. */
  private readonly organizationByProject = new Map<string, string>();
  /** The rate limiter (before routing) and authentication (per module) both need a request's credential: looked up once. */
  private readonly byRequest = new WeakMap<Request, CredentialRow | null>();

  constructor(private readonly db: Database) {
    this.dataVersionQuery = db.prepare<{ data_version: number }, []>("PRAGMA data_version");
  }

  /** The live credential a bearer value stands for, or null when unknown, revoked or expired. */
  find(token: string, now: Date): CredentialRow | null {
    const checkedAt = performance.now();
    if (checkedAt - this.checkedAt >= DATA_VERSION_INTERVAL_MS) {
      this.checkedAt = checkedAt;
      const dataVersion = this.dataVersionQuery.get()!.data_version;
      if (dataVersion !== this.dataVersion) {
        this.rows.clear();
        this.dataVersion = dataVersion;
      }
    }
    const hash = sha256Hex(token);
    let row = this.rows.get(hash) ?? null;
    if (!row) {
      row = this.read(hash);
      // Not from inside a transaction: a row read there could be rolled back after.
      if (row && !this.db.inTransaction) {
        if (this.rows.size >= MAX_CACHED_CREDENTIALS) this.rows.clear();
        this.rows.set(hash, row);
      }
    }
    if (row?.expires_at && row.expires_at <= now.toISOString()) return null;
    return row;
  }

  /** The live credential behind a request's Authorization header, looked up once per request. */
  ofRequest(request: Request, now: Date): CredentialRow | null {
    const known = this.byRequest.get(request);
    if (known !== undefined) return known;
    const token = bearerToken(request);
    const row = token ? this.find(token, now) : null;
    this.byRequest.set(request, row);
    return row;
  }

  /** Call after any UPDATE or DELETE of the credentials table: the next lookup reads the table again. */
  forget(): void {
    this.rows.clear();
  }

  /** Shutdown: lets go of every cached row. */
  close(): void {
    this.rows.clear();
    this.organizationByProject.clear();
  }

  private read(hash: string): CredentialRow | null {
    // No JOIN with projects: measured 3x slower than separate lookups on this hot path.
    const row = this.db
      .query<Omit<CredentialRow, "organization_id">, [string]>(
        `SELECT id, kind, project_id, mode, scopes, end_user_id, device_id, recording_id, command_id, expires_at, used_at
           FROM credentials WHERE token_hash = ? AND revoked_at IS NULL`,
      )
      .get(hash);
    if (!row) return null;
    const organizationId = this.organizationOf(row.project_id);
    return organizationId ? { ...row, organization_id: organizationId } : null;
  }

  private organizationOf(projectId: string): string | null {
    const cached = this.organizationByProject.get(projectId);
    if (cached) return cached;
    const project = this.db.query<{ organization_id: string }, [string]>("SELECT organization_id FROM projects WHERE id = ?").get(projectId);
    if (project) this.organizationByProject.set(projectId, project.organization_id);
    return project?.organization_id ?? null;
  }
}

/** A connection and its credential cache: what a writer of the credentials table needs (Deps has both). */
export type CredentialStore = { db: Database; credentials: CredentialCache };

/** Path of the pre-signed PUT target (spec: upload-url); the token after it is the request's only credential. */
export const UPLOAD_TARGET_PATH = "/v1/uploads/";

/**
 * The upload credential a pre-signed PUT carries in its path, while it can still be used;
 * null for any other request, an unknown, expired or spent token, or another kind of token.
 */
export function uploadCredentialOfRequest(credentials: CredentialCache, request: Request, now: Date): CredentialRow | null {
  if (request.method !== "PUT") return null;
  const { pathname } = new URL(request.url);
  if (!pathname.startsWith(UPLOAD_TARGET_PATH)) return null;
  const token = pathname.slice(UPLOAD_TARGET_PATH.length);
  if (!token.startsWith(TOKEN_PREFIX.upload("test")) || token.includes("/")) return null;
  const row = credentials.find(token, now);
  return row?.kind === "upload" && !row.used_at ? row : null;
}

/** Which live credentials to revoke: every field given must match. */
export type RevokeFilter = {
  kinds: readonly CredentialKind[];
  id?: string;
  projectId?: string;
  mode?: Mode;
  deviceId?: string;
  /** Only the credentials of these commands (an empty list revokes none). */
  commandIds?: readonly string[];
};

/**
 * The one revocation of credentials (the table's owner is this file, decision 132): marks the
 * live ones matching `filter` revoked and forgets the cache in the same call, so a revoked
 * token is never served from it. Returns what was revoked, with its tenant (for the audit log).
 */
export function revokeCredentials({ db, credentials }: CredentialStore, filter: RevokeFilter, now: Date): { id: string; project_id: string; mode: Mode }[] {
  if (filter.commandIds?.length === 0) return [];
  const where = [`kind IN (${filter.kinds.map(() => "?").join(", ")})`, "revoked_at IS NULL"];
  const params: string[] = [now.toISOString(), ...filter.kinds];
  const match = (column: string, value: string | undefined) => {
    if (value === undefined) return;
    where.push(`${column} = ?`);
    params.push(value);
  };
  match("id", filter.id);
  match("project_id", filter.projectId);
  match("mode", filter.mode);
  match("device_id", filter.deviceId);
  if (filter.commandIds) {
    where.push(`command_id IN (${filter.commandIds.map(() => "?").join(", ")})`);
    params.push(...filter.commandIds);
  }
  const revoked = db
    .query<{ id: string; project_id: string; mode: Mode }, string[]>(
      `UPDATE credentials SET revoked_at = ? WHERE ${where.join(" AND ")} RETURNING id, project_id, mode`,
    )
    .all(...params);
  credentials.forget();
  return revoked;
}

/** Revokes every live device token of a device (unbind, token refresh). */
export function revokeDeviceCredentials(store: CredentialStore, deviceId: string, now: Date): void {
  revokeCredentials(store, { kinds: ["device"], deviceId }, now);
}

/** The API keys (secret and restricted) of a project, or of one tenant, oldest first; revoked ones too (their hints stay listed). */
export function listApiKeyRows(db: Database, filter: { projectId: string; mode?: Mode }): ApiKeyRow[] {
  const byMode = filter.mode === undefined ? "" : " AND mode = ?";
  return db
    .query<ApiKeyRow, string[]>(
      `SELECT id, name, hint, mode, scopes, end_user_id, created_at, revoked_at FROM credentials
        WHERE project_id = ?${byMode} AND kind IN ('secret', 'restricted') ORDER BY created_at, id`,
    )
    .all(...(filter.mode === undefined ? [filter.projectId] : [filter.projectId, filter.mode]));
}

/** Live API keys by id, by hint, or by full value (found by its hash): the key an operator names. */
export function findLiveApiKeys(db: Database, by: { id: string } | { hint: string } | { token: string }): { id: string; hint: string }[] {
  const [column, value] = "id" in by ? ["id", by.id] : "hint" in by ? ["hint", by.hint] : ["token_hash", sha256Hex(by.token)];
  return db
    .query<{ id: string; hint: string }, [string]>(
      `SELECT id, hint FROM credentials WHERE ${column} = ? AND kind IN ('secret', 'restricted') AND revoked_at IS NULL ORDER BY created_at, id`,
    )
    .all(value);
}

/** An API key as listed: its hint, never its token. */
export type ApiKeyRow = {
  id: string;
  name: string | null;
  hint: string;
  mode: Mode;
  scopes: string | null;
  end_user_id: string | null;
  created_at: string;
  revoked_at: string | null;
};

/**
 * Marks a single-use credential used. Returns false when it already was, so that of two
 * racing requests exactly one wins.
 */
export function consumeCredential({ db, credentials }: CredentialStore, id: string, now: Date): boolean {
  const won = db.query("UPDATE credentials SET used_at = ? WHERE id = ? AND used_at IS NULL").run(now.toISOString(), id).changes === 1;
  credentials.forget();
  return won;
}

/** How long a spent token's row is kept after it stopped working, for diagnosis. */
export const SPENT_TOKEN_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;

/**
 * Scheduled purge of tokens that can never work again: upload, reset and device tokens
 * that expired, were used or were revoked a week ago or more. API keys stay: their hints
 * remain listed after revocation.
 */
export function purgeSpentTokens({ db, credentials }: CredentialStore, now: Date): number {
  const cutoff = new Date(now.getTime() - SPENT_TOKEN_RETENTION_MS).toISOString();
  const purged = db
    .query(
      `DELETE FROM credentials WHERE kind IN ('upload', 'reset', 'device')
         AND (expires_at <= ?1 OR used_at <= ?1 OR revoked_at <= ?1)`,
    )
    .run(cutoff).changes;
  credentials.forget();
  return purged;
}
