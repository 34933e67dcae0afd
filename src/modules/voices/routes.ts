import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import { authentication, authorize } from "../../http/auth";
import { idempotency } from "../../http/idempotency";
import { pageOf } from "../../http/pagination";
import { idParam, noContent } from "../../http/schemas";
import { addSampleBody, createVoiceBody, listVoicesQuery, updateVoiceBody, voiceSchema } from "./schema";
import { addSample, createVoice, deleteVoice, getVoice, listVoices, updateVoice } from "./service";

export function voicesRoutes(deps: Deps) {
  const { db, clock } = deps;
  return new Elysia({ name: "parley.voices", detail: { tags: ["Voices"] } })
    .use(authentication(deps))
    .use(idempotency(deps))
    .post(
      "/voices",
      ({ principal, body, set }) => {
        const caller = authorize(principal, "voices:write");
        set.status = 201;
        return createVoice(db, caller, body, clock.now());
      },
      {
        idempotent: true,
        body: createVoiceBody,
        response: { 201: voiceSchema },
        detail: {
          summary: "Create a known voice",
          description:
            "Scope voices:write. Idempotency-Key supported. A name, and optionally the end user the voice is (an end-user-scoped key links its own). It recognises nobody until a sample is added or a speaker is named with remember. 404 resource_not_found for an unknown end user.",
        },
      },
    )
    .get("/voices", ({ principal, query }) => listVoices(db, authorize(principal, "voices:read"), query), {
      query: listVoicesQuery,
      response: { 200: pageOf(voiceSchema) },
      detail: { summary: "List known voices", description: "Scope voices:read. Filter by end_user_id; newest first." },
    })
    .get("/voices/:id", ({ principal, params }) => getVoice(db, authorize(principal, "voices:read"), params.id), {
      params: idParam,
      response: { 200: voiceSchema },
      detail: { summary: "Get a known voice", description: "Scope voices:read." },
    })
    .patch("/voices/:id", ({ principal, params, body }) => updateVoice(db, authorize(principal, "voices:write"), params.id, body, clock.now()), {
      params: idParam,
      body: updateVoiceBody,
      response: { 200: voiceSchema },
      detail: {
        summary: "Rename or relink a known voice",
        description: "Scope voices:write. Absent fields are kept; end_user_id null unlinks. Transcripts already labelled keep the old name.",
      },
    })
    .delete(
      "/voices/:id",
      ({ principal, params, set }) => {
        deleteVoice(db, authorize(principal, "voices:write"), params.id);
        set.status = 204;
      },
      {
        params: idParam,
        response: noContent,
        detail: { summary: "Delete a known voice", description: "Scope voices:write. Its voiceprints are erased with it." },
      },
    )
    .post(
      "/voices/:id/samples",
      async ({ principal, params, body, set }) => {
        const caller = authorize(principal, "voices:write");
        const voice = await addSample(deps, caller, params.id, body, clock.now());
        set.status = 201;
        return voice;
      },
      {
        idempotent: true,
        params: idParam,
        body: addSampleBody,
        response: { 201: voiceSchema },
        detail: {
          summary: "Add a sample of a voice",
          description:
            "Scope voices:write. Idempotency-Key supported. A voiceprint of the speech from start_ms to end_ms of a recording (a span where only this voice speaks, at least 2 s of speech), by the diarizer in use. 404 resource_not_found for an unknown recording, 409 resource_conflict when it has no uploaded audio or the diarizer keeps no voiceprints, 422 for a span past the end or with too little speech.",
        },
      },
    );
}
