import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import { authentication, authorize } from "../../http/auth";
import { idempotency } from "../../http/idempotency";
import { pageOf } from "../../http/pagination";
import { idParam } from "../../http/schemas";
import { redactedQuery } from "../redaction/schema";
import { TRANSCRIPT_FORMATS } from "./renderings";
import { createTranscriptionBody, listTranscriptionsQuery, transcriptionSchema, transcriptQuery } from "./schema";
import { createTranscription, getTranscription, listTranscriptions, renderTranscript } from "./service";

export function transcriptionsRoutes(deps: Deps) {
  const { clock } = deps;
  return new Elysia({ name: "parley.transcriptions", detail: { tags: ["Transcriptions"] } })
    .use(authentication(deps))
    .use(idempotency(deps))
    .post(
      "/transcriptions",
      ({ principal, body, set }) => {
        const caller = authorize(principal, "transcriptions:write");
        set.status = 202;
        return createTranscription(deps, caller, body, clock.now());
      },
      {
        idempotent: true,
        body: createTranscriptionBody,
        response: { 202: transcriptionSchema },
        detail: {
          summary: "Transcribe a recording",
          description:
            "Scope transcriptions:write. Idempotency-Key supported. 202 with the transcription in status processing; transcription.completed or .failed follows. A new request for the same recording reprocesses it (earlier transcriptions are kept). 404 resource_not_found for an unknown recording, 409 resource_conflict when it has no uploaded audio or a transcription of it is still processing.",
        },
      },
    )
    .get("/transcriptions", ({ principal, query }) => listTranscriptions(deps, authorize(principal, "transcriptions:read"), query), {
      query: listTranscriptionsQuery,
      response: { 200: pageOf(transcriptionSchema) },
      detail: { summary: "List transcriptions", description: "Scope transcriptions:read. Filter by recording_id; newest first." },
    })
    .get("/transcriptions/:id", ({ principal, params, query }) => getTranscription(deps, authorize(principal, "transcriptions:read"), params.id, { redacted: query.redacted === "true" }), {
      params: idParam,
      query: redactedQuery,
      response: { 200: transcriptionSchema },
      detail: {
        summary: "Get a transcription",
        description:
          "Scope transcriptions:read. Poll status, or wait for the transcription.* events. With redacted=true, names, dates of birth, phone numbers, emails, addresses, record and case numbers, IBANs and card numbers in the text and segments are replaced by their kind ([NAME], [PHONE], ...).",
      },
    })
    .get(
      "/transcriptions/:id/transcript",
      async ({ principal, params, query }) => {
        const { body, contentType } = await renderTranscript(deps, authorize(principal, "transcriptions:read"), params.id, query.format);
        return new Response(body, { headers: { "content-type": contentType } });
      },
      {
        params: idParam,
        query: transcriptQuery,
        detail: {
          summary: "Render a transcript",
          description:
            "Scope transcriptions:read. format srt, vtt or txt (default): each cue or paragraph is led by its speaker's label (WebVTT as a <v Name> voice span). 409 transcription_not_ready until the transcription has completed.",
          responses: {
            200: {
              description: "The transcript in the format asked for",
              content: Object.fromEntries(Object.values(TRANSCRIPT_FORMATS).map((type) => [type, { schema: { type: "string" as const } }])),
            },
          },
        },
      },
    );
}
