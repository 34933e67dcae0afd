import type { Database } from "bun:sqlite";
import { type CredentialStore, findLiveApiKeys, issueCredential, listApiKeyRows, revokeCredentials } from "../../http/credentials";
import type { Mode, Tenant } from "../../tenancy";
import { hintOf } from "../../crypto";
import { ApiError } from "../../http/errors";
import { isScope, SCOPES } from "../../http/scopes";
import { runningCli } from "../../runtime/cli-name";
import { type Actor, operatorActor, recordAudit } from "../audit/service";
import { findEndUser } from "../end-users/service";
import { findProjectByName } from "../projects/service";

const API_KEY_KINDS = ["secret", "restricted"] as const;

export type ApiKey = {
  id: string;
  hint: string;
  mode: Mode;
  scopes: string[] | null;
  end_user_id: string | null;
  created_at: string;
  revoked_at: string | null;
};
export type CreatedApiKey = Omit<ApiKey, "created_at" | "revoked_at"> & { key: string };

export type CreateKeyInput = { project: string; mode: Mode; scopes?: string[]; endUserId?: string; name?: string };

/**
 * Makes an API key: no scopes gives a secret key (sk_), scopes give a restricted key
 * (rk_), an end user confines either to that end user. The full key is returned once.
 * Audited as `actor`: the operator at the CLI unless an admin session says who.
 */
export function createApiKey(db: Database, input: CreateKeyInput, now: Date, actor: Actor = operatorActor()): CreatedApiKey {
  const project = findProjectByName(db, input.project);
  if (!project) throw new ApiError("not_found", `No project named ${input.project}. Create it with: ${runningCli()} projects create ${input.project}`);
  return createKeyIn(db, { projectId: project.id, mode: input.mode }, input, now, `project ${input.project}`, actor);
}

/** createApiKey for a tenant known by id: the dashboard's Keys page (decision 094). */
export function createTenantKey(db: Database, tenant: Tenant, input: Omit<CreateKeyInput, "project" | "mode">, now: Date, actor: Actor): CreatedApiKey {
  return createKeyIn(db, tenant, input, now, "this project", actor);
}

function createKeyIn(db: Database, tenant: Tenant, input: Omit<CreateKeyInput, "project" | "mode">, now: Date, where: string, actor: Actor): CreatedApiKey {
  const unknown = (input.scopes ?? []).filter((s) => !isScope(s));
  if (unknown.length)
    throw new ApiError("validation_error", `Unknown scope(s): ${unknown.join(", ")}. Known scopes: ${SCOPES.join(", ")}.`, { param: "scopes" });
  if (input.endUserId) {
    const endUser = findEndUser(db, tenant, input.endUserId);
    if (!endUser || endUser.deleted_at)
      throw new ApiError("not_found", `No end user ${input.endUserId} in ${where} (${tenant.mode} mode).`, { param: "end_user_id" });
  }
  const scopes = input.scopes?.length ? [...new Set(input.scopes)] : null;
  const issued = db.transaction(() => {
    const credential = issueCredential(db, {
      kind: scopes ? "restricted" : "secret",
      projectId: tenant.projectId,
      mode: tenant.mode,
      name: input.name,
      scopes,
      endUserId: input.endUserId ?? null,
      now,
    });
    recordAudit(db, actor, tenant, "key.create", [credential.id], now);
    return credential;
  })();
  return { id: issued.id, key: issued.token, hint: issued.hint, mode: tenant.mode, scopes, end_user_id: input.endUserId ?? null };
}

export function listApiKeys(db: Database, projectName: string): ApiKey[] {
  const project = findProjectByName(db, projectName);
  if (!project) throw new ApiError("not_found", `No project named ${projectName}.`);
  return listApiKeyRows(db, { projectId: project.id }).map(({ name: _name, ...k }) => parseScopes(k));
}

const parseScopes = <K extends { scopes: string | null }>(k: K): Omit<K, "scopes"> & { scopes: string[] | null } => ({
  ...k,
  scopes: k.scopes ? JSON.parse(k.scopes) : null,
});

/** A tenant's API keys, newest first, by hint (the full key was shown once); revoked ones too. */
export function listTenantKeys(db: Database, tenant: Tenant): (ApiKey & { name: string | null })[] {
  return listApiKeyRows(db, tenant).reverse().map(parseScopes);
}

/** Revokes a tenant's API key; a key of another project or mode is not found, as an unknown one. */
export function revokeTenantKey(store: CredentialStore, tenant: Tenant, keyId: string, now: Date, actor: Actor): void {
  const { db } = store;
  const changed = db.transaction(() => {
    const revoked = revokeCredentials(store, { kinds: API_KEY_KINDS, id: keyId, projectId: tenant.projectId, mode: tenant.mode }, now).length;
    if (revoked) recordAudit(db, actor, tenant, "key.revoke", [keyId], now);
    return revoked;
  })();
  if (!changed) throw new ApiError("not_found", `No live API key ${keyId} in this project and mode.`, { param: "id" });
}

/**
 * Which live key an operator means: its id (key_...), its full value (what they hold when a
 * key leaks: found by its hash) or its hint (sk_live_...abcd, when only one live key has it).
 * Messages never repeat a full value, so it stays out of terminals and logs.
 */
function liveKeyOf(db: Database, ref: string): { id: string; hint: string } {
  const by = ref.startsWith("key_") ? { id: ref } : ref.includes("...") ? { hint: ref } : { token: ref };
  const keys = findLiveApiKeys(db, by);
  if (keys.length > 1)
    throw new ApiError("validation_error", `${keys.length} live API keys have the hint ${ref} (${keys.map((k) => k.id).join(", ")}); revoke one by its id.`);
  if (keys[0]) return keys[0];
  if ("token" in by) throw new ApiError("not_found", `No live API key has the value given (${hintOf(ref)}).`);
  throw new ApiError("not_found", "hint" in by ? `No live API key has the hint ${ref}.` : `No live API key ${ref}.`);
}

/** Revokes a key named by id, full value or hint (the CLI); returns what identifies it without the secret. */
export function revokeApiKey(store: CredentialStore, ref: string, now: Date, actor: Actor = operatorActor()): { id: string; hint: string } {
  const { db } = store;
  const key = liveKeyOf(db, ref);
  const revoked = db.transaction(() => {
    const [row] = revokeCredentials(store, { kinds: API_KEY_KINDS, id: key.id }, now);
    if (row) recordAudit(db, actor, { projectId: row.project_id, mode: row.mode }, "key.revoke", [key.id], now);
    return row;
  })();
  if (!revoked) throw new ApiError("not_found", `No live API key ${key.id}.`);
  return key;
}
