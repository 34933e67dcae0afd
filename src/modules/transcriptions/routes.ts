import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import { authentication, authorize } from "../../http/auth";
import { idempotency } from "../../http/idempotency";
import { pageOf } from "../../http/pagination";
import { idParam, responseHeaders } from "../../http/schemas";
import { redactedQuery } from "../redaction/schema";
import { REDACTION_HEADER, redactionPasses } from "../redaction/service";
import { TRANSCRIPT_FORMATS } from "./renderings";
import { revisionRoutes } from "./revision-routes";
import { revisionQuery } from "./revisions-schema";
import { createTranscriptionBody, listTranscriptionsQuery, nameSpeakersBody, transcriptionSchema, transcriptQuery } from "./schema";
import { nameSpeakers } from "./speaker-names";
import { createTranscription, getTranscription, listTranscriptions, renderTranscript } from "./service";

export function transcriptionsRoutes(deps: Deps) {
  const { clock } = deps;
  return new Elysia({ name: "parley.transcriptions", detail: { tags: ["Transcriptions"] } })
    .use(authentication(deps))
    .use(idempotency(deps))
    .use(revisionRoutes(deps))
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
    .get(
      "/transcriptions/:id",
      async ({ principal, params, query, set }) => {
        const tenant = authorize(principal, "transcriptions:read");
        const redacted = query.redacted === "true";
        const transcription = await getTranscription(deps, tenant, params.id, { redacted, revision: query.revision });
        if (redacted) set.headers[REDACTION_HEADER] = redactionPasses(deps.db, tenant, transcription.id);
        return transcription;
      },
      {
        params: idParam,
        query: redactedQuery.extend(revisionQuery),
        response: { 200: transcriptionSchema },
        detail: {
          ...responseHeaders({ 200: ["Parley-Redaction"] }),
          summary: "Get a transcription",
          description:
            "Scope transcriptions:read. Poll status, or wait for the transcription.* events. With redacted=true, names, dates of birth, phone numbers, emails, addresses, record and case numbers, IBANs and card numbers in the text and segments are replaced by their kind ([NAME], [PHONE], ...); the Parley-Redaction header says which passes found them: `rules; model=completed`, `model=failed` or `model=not_run` (the local language model's pass has not run on it). Text, segments and speakers are the latest revision (`revision` says which); revision=N reads an earlier one, 0 the machine's original (404 not_found, param revision, for one it never had).",
        },
      },
    )
    .patch("/transcriptions/:id/speakers", ({ principal, params, body }) => nameSpeakers(deps, authorize(principal, "transcriptions:write"), params.id, body), {
      params: idParam,
      body: nameSpeakersBody,
      response: { 200: transcriptionSchema },
      detail: {
        summary: "Name speakers",
        description:
          'Scope transcriptions:write. Body {"SPEAKER_2": {"name": "Dr. Weber", "remember": true}}: each named speaker keeps its id in speakers with the name as label, its segments carry the name as speaker, and the recording is indexed again so search results and Ask citations carry it. With remember the speaker\'s voiceprint is added to the known voice of that name (made if new), so later recordings recognise it. 404 not_found, 409 transcription_not_ready until completed (resource_conflict when remember cannot be done: no voiceprints in the diarizer, or the audio is gone), 422 for an unknown speaker id, a name that looks like a speaker id or that another speaker has, or a speaker with too little speech to remember.',
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
