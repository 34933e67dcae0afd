import type { Database } from "bun:sqlite";
import { decryptWithServerSecret, encryptWithServerSecret } from "../../crypto";
import type { Deps } from "../../deps";
import { bodyField, requireUnconfined } from "../../http/access";
import type { Principal } from "../../http/auth";
import { downloadHeaders } from "../../http/downloads";
import { ApiError } from "../../http/errors";
import type { Page } from "../../http/pagination";
import { newId } from "../../ids";
import type { Tenant } from "../../tenancy";
import { endUsersOfExport } from "../audit/service";
import { loadEndUser } from "../end-users/service";
import { loadRecording, selectRecordings } from "../recordings/service";
import type { CreateExportBody, Export, ListExportsQuery } from "./schema";
import { type ExportFilter, type ExportRow, findExport, insertExport, listExportRows } from "./store";

export const BUILD_EXPORT_JOB = "exports.build";

type ExportDeps = Pick<Deps, "db" | "clock" | "audit" | "queue" | "config" | "serverSecret">;

const iso = (value: string | undefined) => (value === undefined ? undefined : new Date(value).toISOString());

export function toExport(row: ExportRow, publicUrl: string): Export {
  const filter = JSON.parse(row.filter) as ExportFilter;
  return {
    id: row.id,
    status: row.status,
    matter: row.matter,
    ...filter,
    recording_ids: JSON.parse(row.recording_ids) as string[],
    encrypted: row.encrypted === 1,
    download_url: row.status === "completed" ? `${publicUrl}/v1/exports/${row.id}/download` : null,
    sha256: row.sha256,
    size_bytes: row.size_bytes,
    error: row.error ? (JSON.parse(row.error) as { code: string; message: string }) : null,
    created_at: row.created_at,
    completed_at: row.completed_at,
    failed_at: row.failed_at,
    erased_at: row.erased_at,
  };
}

/** The recordings the body selects, each checked as the caller may see it (404 naming the field otherwise). */
function selection(db: Database, principal: Principal, body: CreateExportBody): { id: string; end_user_id: string | null }[] {
  if ((body.end_user_id === undefined) === (body.recording_ids === undefined)) {
    throw new ApiError("validation_error", "Name exactly one of end_user_id or recording_ids.", { param: body.end_user_id ? "recording_ids" : "end_user_id" });
  }
  if (body.end_user_id) loadEndUser(db, principal, body.end_user_id, bodyField("end_user_id"));
  for (const id of body.recording_ids ?? []) loadRecording(db, principal, id, bodyField("recording_ids"));
  const filter = { endUserId: body.end_user_id, ids: body.recording_ids, createdAfter: iso(body.created_after), createdBefore: iso(body.created_before) };
  return selectRecordings(db, principal, filter);
}

/**
 * POST /exports: fixes the selection now (what a later upload adds is not in it), records
 * it in the audit log and enqueues the build. Project-wide compliance work, so never for a
 * key confined to one end user. A passphrase is kept, encrypted with the server secret,
 * only until the build has used it.
 */
export function createExport(deps: ExportDeps, principal: Principal, body: CreateExportBody): Export {
  const { db } = deps;
  requireUnconfined(principal, "export recordings");
  const now = deps.clock.now();
  return db.transaction(() => {
    const selected = selection(db, principal, body);
    const ids = selected.map((r) => r.id);
    const id = newId("exp_", now.getTime());
    const filter: ExportFilter = {
      end_user_id: body.end_user_id ?? null,
      created_after: iso(body.created_after) ?? null,
      created_before: iso(body.created_before) ?? null,
    };
    insertExport(db, principal, {
      id,
      matter: body.matter ?? null,
      filter: JSON.stringify(filter),
      recording_ids: JSON.stringify(ids),
      encrypted: body.passphrase ? 1 : 0,
      passphrase_sealed: body.passphrase ? encryptWithServerSecret(deps.serverSecret, body.passphrase) : null,
      created_by: principal.credentialId,
      created_at: now.toISOString(),
    });
    // The archive will hold these end users' content: it is disclosed, with the matter as the reason (decision 140).
    const disclosed = { endUsers: [body.end_user_id ?? null, ...selected.map((r) => r.end_user_id)], reason: body.matter ?? null };
    deps.audit.record(principal, principal, "export.create", [id, ...ids], disclosed);
    deps.queue.enqueue(BUILD_EXPORT_JOB, { project_id: principal.projectId, mode: principal.mode, export_id: id }, { dedupeKey: `${BUILD_EXPORT_JOB}:${id}` });
    return toExport(findExport(db, principal, id)!, deps.config.publicUrl);
  })();
}

export function loadExport(db: Database, principal: Principal, id: string): ExportRow {
  requireUnconfined(principal, "read exports");
  const row = findExport(db, principal, id);
  if (!row) throw new ApiError("not_found", `No export ${id}.`, { param: "id" });
  return row;
}

export function listExports(deps: Pick<Deps, "db" | "config">, principal: Principal, q: ListExportsQuery): Page<Export> {
  requireUnconfined(principal, "read exports");
  return listExportRows(deps.db, principal, { limit: q.limit, cursor: q.cursor }, (row) => toExport(row, deps.config.publicUrl));
}

/** GET /exports/{id}/download: the archive as built; every download is audited. */
export async function downloadExport(deps: Pick<Deps, "db" | "audit" | "storage">, principal: Principal, id: string): Promise<Response> {
  const row = loadExport(deps.db, principal, id);
  // The record stays, the archive is gone (decision 107): 404, as for anything not there to download.
  if (row.status === "deleted") throw new ApiError("not_found", `The archive of export ${id} was deleted at ${row.erased_at}.`, { param: "id" });
  if (row.status === "expired")
    throw new ApiError(
      "not_found",
      `The archive of export ${id} expired and was erased at ${row.erased_at} (PARLEY_EXPORT_RETENTION_DAYS); start a new export.`,
      { param: "id" },
    );
  if (row.status !== "completed" || !row.storage_key) throw new ApiError("resource_conflict", `Export ${id} is ${row.status}; download it once completed.`);
  await deps.audit.access(principal, "export.download", [id], { endUsers: endUsersOfExport(deps.db, principal, id), reason: row.matter });
  const name = `${id}.zip${row.encrypted ? ".parleyx" : ""}`;
  return new Response(deps.storage.read(row.storage_key), {
    headers: {
      ...downloadHeaders(row.encrypted ? "application/octet-stream" : "application/zip", name),
      "content-length": String(row.size_bytes ?? 0),
      etag: `"${row.sha256}"`,
    },
  });
}

/** The passphrase of an encrypted export, while its build has not used it yet. */
export function passphraseOf(serverSecret: string, row: ExportRow): string | undefined {
  return row.passphrase_sealed ? decryptWithServerSecret(serverSecret, row.passphrase_sealed) : undefined;
}

export const exportTenant = (row: ExportRow): Tenant => ({ projectId: row.project_id, mode: row.mode });
