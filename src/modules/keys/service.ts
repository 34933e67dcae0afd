import type { Database } from "bun:sqlite";
import { type CredentialStore, issueCredential } from "../../http/credentials";
import type { Mode } from "../../tenancy";
import { ApiError } from "../../http/errors";
import { isScope, SCOPES } from "../../http/scopes";
import { type Actor, operatorActor, recordAudit } from "../audit/service";
import { findProjectByName } from "../projects/service";

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
  const unknown = (input.scopes ?? []).filter((s) => !isScope(s));
  if (unknown.length) throw new ApiError("validation_error", `Unknown scope(s): ${unknown.join(", ")}. Known scopes: ${SCOPES.join(", ")}.`, { param: "scopes" });
  if (input.endUserId) {
    const endUser = db.query("SELECT 1 FROM end_users WHERE id = ? AND project_id = ? AND mode = ? AND deleted_at IS NULL").get(input.endUserId, project.id, input.mode);
    if (!endUser) throw new ApiError("not_found", `No end user ${input.endUserId} in project ${input.project} (${input.mode} mode).`, { param: "end_user_id" });
  }
  const scopes = input.scopes?.length ? [...new Set(input.scopes)] : null;
  const issued = db.transaction(() => {
    const credential = issueCredential(db, {
      kind: scopes ? "restricted" : "secret",
      projectId: project.id,
      mode: input.mode,
      name: input.name,
      scopes,
      endUserId: input.endUserId ?? null,
      now,
    });
    recordAudit(db, actor, { projectId: project.id, mode: input.mode }, "key.create", [credential.id], now);
    return credential;
  })();
  return { id: issued.id, key: issued.token, hint: issued.hint, mode: input.mode, scopes, end_user_id: input.endUserId ?? null };
}

export function listApiKeys(db: Database, projectName: string): ApiKey[] {
  const project = findProjectByName(db, projectName);
  if (!project) throw new ApiError("not_found", `No project named ${projectName}.`);
  return db
    .query<Omit<ApiKey, "scopes"> & { scopes: string | null }, [string]>(
      "SELECT id, hint, mode, scopes, end_user_id, created_at, revoked_at FROM credentials WHERE project_id = ? AND kind IN ('secret', 'restricted') ORDER BY created_at",
    )
    .all(project.id)
    .map((k) => ({ ...k, scopes: k.scopes ? JSON.parse(k.scopes) : null }));
}

export function revokeApiKey({ db, credentials }: CredentialStore, keyId: string, now: Date, actor: Actor = operatorActor()): void {
  const revoked = db.transaction(() => {
    const key = db
      .query<{ project_id: string; mode: Mode }, [string, string]>("UPDATE credentials SET revoked_at = ? WHERE id = ? AND kind IN ('secret', 'restricted') AND revoked_at IS NULL RETURNING project_id, mode")
      .get(now.toISOString(), keyId);
    if (key) recordAudit(db, actor, { projectId: key.project_id, mode: key.mode }, "key.revoke", [keyId], now);
    return key;
  })();
  credentials.forget();
  if (!revoked) throw new ApiError("not_found", `No live API key ${keyId}.`);
}
