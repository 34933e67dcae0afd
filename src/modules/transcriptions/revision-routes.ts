import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import { authentication, authorize } from "../../http/auth";
import { pageOf } from "../../http/pagination";
import { downloadHeaders } from "../../http/downloads";
import { binaryResponse, idParam } from "../../http/schemas";
import { exportQuery, EXPORT_FORMATS } from "./export/schema";
import { exportTranscription } from "./export/service";
import { bulkEditBody, restoreBody, revisionSchema, segmentEditBody, segmentIndexParam } from "./revisions-schema";
import { correctSegment, correctSegments, listRevisions, restoreRevision } from "./revisions";
import { transcriptionSchema } from "./schema";

/** Export types other than JSON: files, documented rather than validated. */
const BINARY_TYPES = Object.entries(EXPORT_FORMATS)
  .filter(([format]) => format !== "json")
  .map(([, type]) => type.split(";")[0]!);

const CORRECTION =
  "Each change makes a new numbered revision (the machine's original stays revision 0, readable with ?revision=0); search and Ask are indexed again from it; audited. An edit that changes nothing makes no revision. 404 not_found, 409 transcription_not_ready until completed, 409 legal_hold_active while a hold covers the recording, 422 for text over 10,000 characters or a new speaker name that looks like a speaker id.";

/** Corrections with history and exports (issue 25, decisions 154-156). */
export function revisionRoutes(deps: Deps) {
  return new Elysia({ name: "parley.transcriptions.revisions", detail: { tags: ["Transcriptions"] } })
    .use(authentication(deps))
    .patch(
      "/transcriptions/:id/segments/:index",
      ({ principal, params, body }) => correctSegment(deps, authorize(principal, "transcriptions:write"), params.id, params.index, body),
      {
        params: segmentIndexParam,
        body: segmentEditBody,
        response: { 200: transcriptionSchema },
        detail: {
          summary: "Correct a segment",
          description: `Scope transcriptions:write. Body {text?, speaker?, apply_to?}: the segment's words, its speaker (an existing speaker's id or name, or a new name), or both; apply_to "speaker" renames the segment's speaker wherever it speaks (to a name another speaker has: their segments join). ${CORRECTION} 404 not_found (param index) for a segment the transcription lacks.`,
        },
      },
    )
    .patch(
      "/transcriptions/:id/segments",
      ({ principal, params, body }) => correctSegments(deps, authorize(principal, "transcriptions:write"), params.id, body),
      {
        params: idParam,
        body: bulkEditBody,
        response: { 200: transcriptionSchema },
        detail: {
          summary: "Correct several segments",
          description: `Scope transcriptions:write. Body {segments: [{index, text?, speaker?, apply_to?}]}: applied in order as one revision; one refusal changes nothing. ${CORRECTION} 422 (param segments[n].index) for a segment the transcription lacks.`,
        },
      },
    )
    .get("/transcriptions/:id/revisions", ({ principal, params }) => listRevisions(deps, authorize(principal, "transcriptions:read"), params.id), {
      params: idParam,
      response: { 200: pageOf(revisionSchema) },
      detail: {
        summary: "List a transcription's revisions",
        description:
          "Scope transcriptions:read. Newest first, all of them: each with who made it (null for the machine's original, revision 0), when, and what it changed ({segment, field, from, to} or {speaker_id, field: label, from, to}); an undo names the revision it restores. Audited as a read.",
      },
    })
    .post(
      "/transcriptions/:id/revisions",
      async ({ principal, params, body, set }) => {
        const restored = await restoreRevision(deps, authorize(principal, "transcriptions:write"), params.id, body.restore);
        set.status = 201;
        return restored;
      },
      {
        params: idParam,
        body: restoreBody,
        response: { 201: transcriptionSchema },
        detail: {
          summary: "Restore an earlier revision (undo)",
          description: `Scope transcriptions:write. Body {restore: N}: a new revision with revision N's content; nothing is erased. 422 (param restore) unless N is an earlier revision. ${CORRECTION}`,
        },
      },
    )
    .get(
      "/transcriptions/:id/export",
      async ({ principal, params, query }) => {
        const file = await exportTranscription(deps, authorize(principal, "transcriptions:read"), params.id, query);
        return new Response(file.body, { headers: downloadHeaders(file.contentType, file.filename) });
      },
      {
        params: idParam,
        query: exportQuery,
        detail: {
          summary: "Export a transcript",
          description:
            "Scope transcriptions:read. format txt, srt, vtt (speaker names on every cue), json (the transcription record), docx or pdf (a verbatim legal transcript: 25 numbered lines a page, times in the margin, speakers in capitals, a caption from the recording's metadata `matter` and `participants`, and a certification page with the recording's and the model's SHA-256, the revision and every correction). revision=N exports an earlier revision; inaudible_below (0-1) writes segments scored below it as [inaudible hh:mm:ss]. Always a download. Audited as transcription.export. 404 not_found, 409 transcription_not_ready until completed, 422 for an unknown format.",
          responses: {
            200: {
              ...binaryResponse("The transcript file; json: the transcription record", BINARY_TYPES, ["Content-Disposition"]),
              content: { ...binaryResponse("", BINARY_TYPES).content, "application/json": { schema: { $ref: "#/components/schemas/Transcription" } } },
            },
          },
        },
      },
    );
}
