import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import { authentication, authorize } from "../../http/auth";
import { idempotency } from "../../http/idempotency";
import { pageOf } from "../../http/pagination";
import { binaryResponse, idParam, responseHeaders } from "../../http/schemas";
import { redactedQuery } from "../redaction/schema";
import { REDACTION_HEADER, redactionPasses } from "../redaction/service";
import { exportSummary } from "./export";
import { createSummaryBody, exportSummaryQuery, listSummariesQuery, summarySchema } from "./schema";
import { createSummary, getSummary, listSummaries } from "./service";

export function summariesRoutes(deps: Deps) {
  const { clock } = deps;
  return new Elysia({ name: "parley.summaries", detail: { tags: ["Summaries"] } })
    .use(authentication(deps))
    .use(idempotency(deps))
    .post(
      "/summaries",
      ({ principal, body, set }) => {
        const caller = authorize(principal, "summaries:write");
        set.status = 202;
        return createSummary(deps, caller, body, clock.now());
      },
      {
        idempotent: true,
        body: createSummaryBody,
        response: { 202: summarySchema },
        detail: {
          summary: "Summarise a transcription",
          description:
            "Scope summaries:write. Idempotency-Key supported. template: general (default), sales, clinical (a medical_note) or legal. 202 with the summary in status processing. One summary per transcription and template: a new request re-runs it under the same id and replaces its result. 404 resource_not_found for an unknown transcription, 409 transcription_not_ready unless it is completed.",
        },
      },
    )
    .get("/summaries", ({ principal, query }) => listSummaries(deps, authorize(principal, "summaries:read"), query), {
      query: listSummariesQuery,
      response: { 200: pageOf(summarySchema) },
      detail: { summary: "List summaries", description: "Scope summaries:read. Filter by transcription_id; newest first." },
    })
    .get(
      "/summaries/:id",
      async ({ principal, params, query, set }) => {
        const tenant = authorize(principal, "summaries:read");
        const redacted = query.redacted === "true";
        const summary = await getSummary(deps, tenant, params.id, { redacted });
        if (redacted) set.headers[REDACTION_HEADER] = redactionPasses(deps.db, tenant, summary.transcription_id);
        return summary;
      },
      {
        params: idParam,
        query: redactedQuery,
        response: { 200: summarySchema },
        detail: {
          ...responseHeaders({ 200: ["Parley-Redaction"] }),
          summary: "Get a summary",
          description:
            "Scope summaries:read. Poll status, or wait for the summary.* events. With redacted=true, identifiers in the text and structured output are replaced by their kind ([NAME], [PHONE], ...); the Parley-Redaction header says which passes found them, as for its transcription.",
        },
      },
    )
    .get("/summaries/:id/export", ({ principal, params, query }) => exportSummary(deps, authorize(principal, "summaries:read"), params.id, query.format), {
      params: idParam,
      query: exportSummaryQuery,
      detail: {
        summary: "Export a summary",
        description:
          "Scope summaries:read. format=fhir: a completed clinical note (template clinical, format medical_note) as a FHIR R4 document Bundle: a Composition with the SOAP sections and a DocumentReference with the note as text/plain and PDF, identified by the recording's SHA-256. Subject and author come from the recording's metadata fhir_subject (e.g. Patient/123) and fhir_author (e.g. Practitioner/456); without an author the end user is named. Statements without evidence are marked. 422 validation_error for another template or an unknown format; 409 resource_conflict until the summary is completed. Audited as a read.",
        responses: { 200: binaryResponse("The FHIR R4 Bundle (JSON)", ["application/fhir+json"], ["Content-Disposition"]) },
      },
    });
}
