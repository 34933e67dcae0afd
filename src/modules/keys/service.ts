import type { Database } from "bun:sqlite";
import { type CredentialStore, issueCredential, listApiKeyRows, revokeCredentials } from "../../http/credentials";
import type { Mode, Tenant } from "../../tenancy";
import { ApiError } from "../../http/errors";
import { isScope, SCOPES } from "../../http/scopes";
import { type Actor, operatorActor, recordAudit } from "../audit/service";
import { findEndUser } from "../end-users/service";
import { findProjectByName } from "../projects/service";

const API_KEY_KINDS = ["secret", "restricted"] as const;

export type ApiKey = { id: string; hint: string; mode: Mode; scopes: string[] | null; end_user_id: string | null; created_at: string; revoked_at: string | null };
export type CreatedApiKey = Omit<ApiKey, "created_at" | "revoked_at"> & { key: string };

export type CreateKeyInput = { project: string; mode: Mode; scopes?: string[]; endUserId?: string; name?: string };

/**
 * Makes an API key: no scopes gives a secret key (sk_), scopes give a restricted key
 * (rk_), an end user confines either to that end user. The full key is returned once.
 * Audited as `actor`: the operator at the CLI unless an admin session says who.
 */
export function createApiKey(db: Database, input: CreateKeyInput, now: Date, actor: Actor = operatorActor()): CreatedApiKey {
  const project = findProjectByName(db, input.project);
  if (!project) throw new ApiError("not_found", `No project named ${input.project}. Create it with: parley projects create ${input.project}`);
  return createKeyIn(db, { projectId: project.id, mode: input.mode }, input, now, `project ${input.project}`, actor);
}

/** createApiKey for a tenant known by id: the dashboard's Keys page (decision 094). */
export function createTenantKey(db: Database, tenant: Tenant, input: Omit<CreateKeyInput, "project" | "mode">, now: Date, actor: Actor): CreatedApiKey {
  return createKeyIn(db, tenant, input, now, "this project", actor);
}

function createKeyIn(db: Database, tenant: Tenant, input: Omit<CreateKeyInput, "project" | "mode">, now: Date, where: string, actor: Actor): CreatedApiKey {
  const unknown = (input.scopes ?? []).filter((s) => !isScope(s));
  if (unknown.length) throw new ApiError("validation_error", `Unknown scope(s): ${unknown.join(", ")}. Known scopes: ${SCOPES.join(", ")}.`, { param: "scopes" });
  if (input.endUserId) {
    const endUser = findEndUser(db, tenant, input.endUserId);
    if (!endUser || endUser.deleted_at) throw new ApiError("not_found", `No end user ${input.endUserId} in ${where} (${tenant.mode} mode).`, { param: "end_user_id" });
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

const parseScopes = <K extends { scopes: string | null }>(k: K): Omit<K, "scopes"> & { scopes: string[] | null } => ({ ...k, scopes: k.scopes ? JSON.parse(k.scopes) : null });

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

export function revokeApiKey(store: CredentialStore, keyId: string, now: Date, actor: Actor = operatorActor()): void {
  const { db } = store;
  const revoked = db.transaction(() => {
    const [key] = revokeCredentials(store, { kinds: API_KEY_KINDS, id: keyId }, now);
    if (key) recordAudit(db, actor, { projectId: key.project_id, mode: key.mode }, "key.revoke", [keyId], now);
    return key;
  })();
  if (!revoked) throw new ApiError("not_found", `No live API key ${keyId}.`);
}
