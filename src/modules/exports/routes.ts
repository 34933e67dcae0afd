import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import { authentication, authorize } from "../../http/auth";
import { pageOf } from "../../http/pagination";
import { binaryResponse, idParam, noContent } from "../../http/schemas";
import { deleteExport } from "./erasure";
import { createExportBody, exportSchema, listExportsQuery } from "./schema";
import { createExport, downloadExport, listExports, loadExport, toExport } from "./service";

export function exportsRoutes(deps: Deps) {
  const { db, config } = deps;
  return new Elysia({ name: "parley.exports", detail: { tags: ["Exports"] } })
    .use(authentication(deps))
    .post(
      "/exports",
      ({ principal, body, set }) => {
        const created = createExport(deps, authorize(principal, "exports:write"), body);
        set.status = 202;
        return created;
      },
      {
        body: createExportBody,
        response: { 202: exportSchema },
        detail: {
          summary: "Start an eDiscovery export",
          description:
            "Scope exports:write; not for end-user-scoped keys. Exactly one of end_user_id or recording_ids, optionally within created_after (inclusive) and created_before (exclusive). 202 with the export in status processing; the zip holds each recording's original audio, transcripts (JSON, SRT, VTT, TXT; a corrected one also with its revision records and every earlier revision), summaries, custody.json (the audit rows about them) and manifest.json (size and SHA-256 of every file). A passphrase (12+ characters) encrypts it (AES-256-GCM). Audited.",
        },
      },
    )
    .get("/exports", ({ principal, query }) => listExports(deps, authorize(principal, "exports:read"), query), {
      query: listExportsQuery,
      response: { 200: pageOf(exportSchema) },
      detail: { summary: "List exports", description: "Scope exports:read. List envelope, newest first." },
    })
    .get("/exports/:id", ({ principal, params }) => toExport(loadExport(db, authorize(principal, "exports:read"), params.id), config.publicUrl), {
      params: idParam,
      response: { 200: exportSchema },
      detail: {
        summary: "Get an export",
        description:
          "Scope exports:read. download_url is set once completed; sha256 and size_bytes are the archive's. Status deleted (DELETE) or expired (PARLEY_EXPORT_RETENTION_DAYS after completion): the archive is erased (erased_at), download_url is null.",
      },
    })
    .delete(
      "/exports/:id",
      ({ principal, params, set }) => {
        deleteExport(deps, authorize(principal, "exports:write"), params.id);
        set.status = 204;
      },
      {
        params: idParam,
        response: noContent,
        detail: {
          summary: "Delete an export's archive",
          description:
            "Scope exports:write. Erases the archive; the export stays readable with status deleted and erased_at, and its download answers 404. 409 resource_conflict while it is still being built; a second DELETE changes nothing. Audited.",
        },
      },
    )
    .get("/exports/:id/download", ({ principal, params }) => downloadExport(deps, authorize(principal, "exports:read"), params.id), {
      params: idParam,
      detail: {
        summary: "Download an export",
        description:
          "Scope exports:read. The zip (application/zip), or its encrypted form (application/octet-stream), as an attachment with X-Content-Type-Options: nosniff and Content-Security-Policy: sandbox; 409 resource_conflict until completed; 404 not_found once the archive is deleted or expired. Every download is audited. `parley export verify FILE` re-checks it.",
        responses: {
          200: binaryResponse(
            "The archive: a zip, or its encrypted form as bytes",
            ["application/zip", "application/octet-stream"],
            ["ETag", "Content-Disposition"],
          ),
        },
      },
    });
}
