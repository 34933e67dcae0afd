import type { Database } from "bun:sqlite";
import type { Deps } from "../../deps";
import { confineToEndUser, maySeeEndUser, notFound, PATH_ID, type Reference, requireUnconfined } from "../../http/access";
import type { Principal } from "../../http/auth";
import { ApiError } from "../../http/errors";
import { rewriteStoredResponses } from "../../http/idempotency";
import type { Page, PageRequest } from "../../http/pagination";
import { newId } from "../../ids";
import { enqueueWalTruncation } from "../../jobs/truncate-wal";
import type { CreateEndUserBody, EndUser, ListEndUsersQuery, UpdateEndUserBody } from "./schema";
import { findEndUser, findEndUserByExternalId, insertEndUser, listEndUserRows, markEndUserDeleted, updateEndUserRow } from "./store";

/** What other modules (devices, config, recordings and search) use of the end-users store: through this service, never the store itself (decision 083). */
export { findEndUser } from "./store";

function assertExternalIdFree(db: Database, principal: Principal, externalId: string | null | undefined, exceptId?: string): void {
  if (!externalId) return;
  const holder = findEndUserByExternalId(db, principal, externalId);
  if (holder && holder.id !== exceptId) {
    throw new ApiError("resource_already_exists", `An end user with external_id ${externalId} already exists.`, { param: "external_id" });
  }
}

export function createEndUser(db: Database, principal: Principal, body: CreateEndUserBody, now: Date): EndUser {
  requireUnconfined(principal, "create end users");
  const at = now.toISOString();
  const user: EndUser = {
    id: newId("eu_", now.getTime()),
    external_id: body.external_id ?? null,
    name: body.name ?? null,
    email: body.email ?? null,
    metadata: body.metadata ?? {},
    created_at: at,
    updated_at: at,
    deleted_at: null,
  };
  return db.transaction(() => {
    assertExternalIdFree(db, principal, user.external_id);
    insertEndUser(db, principal, user);
    return user;
  })();
}

/**
 * The one loader of "the end user this caller may see": of the caller's project and mode,
 * end-user-scoped keys only their own; anything else is the 404 of an unknown id, `ref`
 * saying whether the id came in the path or in a body field (decision 131).
 */
export function loadEndUser(db: Database, principal: Principal, id: string, ref: Reference = PATH_ID): EndUser {
  const user = findEndUser(db, principal, id);
  if (user && maySeeEndUser(principal, user.id)) return user;
  throw new ApiError(ref.code, notFound.endUser(id), { param: ref.param });
}

export function getEndUser(db: Database, principal: Principal, id: string): EndUser {
  return loadEndUser(db, principal, id);
}

export function listEndUsers(db: Database, principal: Principal, query: ListEndUsersQuery): Page<EndUser> {
  const page: PageRequest = { limit: query.limit, cursor: query.cursor };
  return listEndUserRows(
    db,
    principal,
    { externalId: query.external_id, includeDeleted: query.include_deleted === "true", onlyId: confineToEndUser(principal) },
    page,
  );
}

export function updateEndUser(db: Database, principal: Principal, id: string, body: UpdateEndUserBody, now: Date): EndUser {
  return db.transaction(() => {
    const user = getEndUser(db, principal, id);
    if (user.deleted_at) throw new ApiError("resource_conflict", `End user ${id} is deleted and read-only.`);
    // Absent fields are kept; null clears a field.
    const updated: EndUser = {
      ...user,
      external_id: body.external_id === undefined ? user.external_id : body.external_id,
      name: body.name === undefined ? user.name : body.name,
      email: body.email === undefined ? user.email : body.email,
      metadata: body.metadata === undefined ? user.metadata : body.metadata,
      updated_at: now.toISOString(),
    };
    assertExternalIdFree(db, principal, updated.external_id, id);
    updateEndUserRow(db, principal, updated);
    return updated;
  })();
}

/**
 * Marks the end user deleted: read-only from now on, its recordings, transcriptions and
 * summaries retained (spec 4.1). What is erased is the person's own record: external_id
 * (released), name, email and metadata, in the row and in the stored responses of
 * POST /end-users that replay it; a job then empties the WAL of their old values (decision 078).
 * The devices bound to it are released in the same transaction (the endUserDeleted cascade).
 */
export function deleteEndUser(deps: Pick<Deps, "db" | "queue" | "cascades" | "audit">, principal: Principal, id: string, now: Date): void {
  const { db } = deps;
  db.transaction(() => {
    const user = getEndUser(db, principal, id);
    if (user.deleted_at) throw new ApiError("resource_conflict", `End user ${id} is already deleted.`);
    const deletion = { tenant: principal, endUserId: id, now };
    deps.cascades.check("endUserDeleted", deletion); // legal holds, before anything is touched
    markEndUserDeleted(db, principal, id, now.toISOString());
    const erased = findEndUser(db, principal, id);
    rewriteStoredResponses(db, principal, id, (stored) =>
      (stored.body as { id?: unknown } | null)?.id === id ? { status: stored.status, body: erased } : null,
    );
    // Its devices are released (devices registers on this cascade: it sits above end users).
    deps.cascades.fire("endUserDeleted", deletion);
    deps.audit.record(principal, principal, "end_user.delete", [id]);
    enqueueWalTruncation(deps.queue);
  })();
}
