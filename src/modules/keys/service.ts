import type { Database } from "bun:sqlite";
import { type CredentialStore, issueCredential } from "../../http/credentials";
import type { Mode, Tenant } from "../../tenancy";
import { ApiError } from "../../http/errors";
import { isScope, SCOPES } from "../../http/scopes";
import { findProjectByName } from "../projects/service";

export type ApiKey = { id: string; hint: string; mode: Mode; scopes: string[] | null; end_user_id: string | null; created_at: string; revoked_at: string | null };
export type CreatedApiKey = Omit<ApiKey, "created_at" | "revoked_at"> & { key: string };

export type CreateKeyInput = { project: string; mode: Mode; scopes?: string[]; endUserId?: string; name?: string };

/**
 * Makes an API key: no scopes gives a secret key (sk_), scopes give a restricted key
 * (rk_), an end user confines either to that end user. The full key is returned once.
 */
export function createApiKey(db: Database, input: CreateKeyInput, now: Date): CreatedApiKey {
  const project = findProjectByName(db, input.project);
  if (!project) throw new ApiError("not_found", `No project named ${input.project}. Create it with: parley projects create ${input.project}`);
  return createKeyIn(db, { projectId: project.id, mode: input.mode }, input, now, `project ${input.project}`);
}

/** createApiKey for a tenant known by id: the dashboard's Keys page (decision 094). */
export function createTenantKey(db: Database, tenant: Tenant, input: Omit<CreateKeyInput, "project" | "mode">, now: Date): CreatedApiKey {
  return createKeyIn(db, tenant, input, now, "this project");
}

function createKeyIn(db: Database, tenant: Tenant, input: Omit<CreateKeyInput, "project" | "mode">, now: Date, where: string): CreatedApiKey {
  const unknown = (input.scopes ?? []).filter((s) => !isScope(s));
  if (unknown.length) throw new ApiError("validation_error", `Unknown scope(s): ${unknown.join(", ")}. Known scopes: ${SCOPES.join(", ")}.`, { param: "scopes" });
  if (input.endUserId) {
    const endUser = db.query("SELECT 1 FROM end_users WHERE id = ? AND project_id = ? AND mode = ? AND deleted_at IS NULL").get(input.endUserId, tenant.projectId, tenant.mode);
    if (!endUser) throw new ApiError("not_found", `No end user ${input.endUserId} in ${where} (${tenant.mode} mode).`, { param: "end_user_id" });
  }
  const scopes = input.scopes?.length ? [...new Set(input.scopes)] : null;
  const issued = issueCredential(db, {
    kind: scopes ? "restricted" : "secret",
    projectId: tenant.projectId,
    mode: tenant.mode,
    name: input.name,
    scopes,
    endUserId: input.endUserId ?? null,
    now,
  });
  return { id: issued.id, key: issued.token, hint: issued.hint, mode: tenant.mode, scopes, end_user_id: input.endUserId ?? null };
}

export function listApiKeys(db: Database, projectName: string): ApiKey[] {
  const project = findProjectByName(db, projectName);
  if (!project) throw new ApiError("not_found", `No project named ${projectName}.`);
  return db
    .query<KeyRow, [string]>(
      "SELECT id, hint, mode, scopes, end_user_id, created_at, revoked_at FROM credentials WHERE project_id = ? AND kind IN ('secret', 'restricted') ORDER BY created_at",
    )
    .all(project.id)
    .map(parseScopes);
}

type KeyRow = Omit<ApiKey, "scopes"> & { scopes: string | null };
const parseScopes = (k: KeyRow): ApiKey => ({ ...k, scopes: k.scopes ? JSON.parse(k.scopes) : null });

/** A tenant's API keys, newest first, by hint (the full key was shown once); revoked ones too. */
export function listTenantKeys(db: Database, tenant: Tenant): (ApiKey & { name: string | null })[] {
  return db
    .query<KeyRow & { name: string | null }, [string, string]>(
      `SELECT id, name, hint, mode, scopes, end_user_id, created_at, revoked_at FROM credentials
        WHERE project_id = ? AND mode = ? AND kind IN ('secret', 'restricted') ORDER BY created_at DESC, id DESC`,
    )
    .all(tenant.projectId, tenant.mode)
    .map((k) => ({ ...parseScopes(k), name: k.name }));
}

/** Revokes a tenant's API key; a key of another project or mode is not found, as an unknown one. */
export function revokeTenantKey({ db, credentials }: CredentialStore, tenant: Tenant, keyId: string, now: Date): void {
  const changed = db
    .query("UPDATE credentials SET revoked_at = ? WHERE id = ? AND project_id = ? AND mode = ? AND kind IN ('secret', 'restricted') AND revoked_at IS NULL")
    .run(now.toISOString(), keyId, tenant.projectId, tenant.mode).changes;
  credentials.forget();
  if (!changed) throw new ApiError("not_found", `No live API key ${keyId} in this project and mode.`, { param: "id" });
}

export function revokeApiKey({ db, credentials }: CredentialStore, keyId: string, now: Date): void {
  const changed = db.query("UPDATE credentials SET revoked_at = ? WHERE id = ? AND kind IN ('secret', 'restricted') AND revoked_at IS NULL").run(now.toISOString(), keyId).changes;
  credentials.forget();
  if (!changed) throw new ApiError("not_found", `No live API key ${keyId}.`);
}
