import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import { authentication, authorize } from "../../http/auth";
import { idempotent } from "../../http/idempotency";
import { idParam } from "../../http/schemas";
import { downloadAudio } from "./audio";
import { createRecordingBody, listRecordingsQuery } from "./schema";
import { createRecording, deleteRecording, getRecording, listRecordings } from "./service";

export function recordingsRoutes(deps: Deps) {
  const { db, clock } = deps;
  return new Elysia({ name: "parley.recordings", detail: { tags: ["Recordings"] } })
    .use(authentication(deps))
    .post(
      "/recordings",
      (ctx) =>
        idempotent(deps, ctx, () => {
          const principal = authorize(ctx.principal, "recordings:write", { tokens: ["device"] });
          ctx.set.status = 201;
          return createRecording(deps, principal, ctx.body, clock.now());
        }),
      {
        body: createRecordingBody,
        detail: {
          summary: "Create a recording",
          description: "Scope recordings:write, or a device token (device_id and end_user_id then come from the token). Idempotency-Key supported.",
        },
      },
    )
    .get("/recordings", ({ principal, query }) => listRecordings(db, authorize(principal, "recordings:read"), query), {
      query: listRecordingsQuery,
      detail: { summary: "List recordings", description: "Scope recordings:read. Filters: end_user_id, device_id, status, recorded_after (inclusive), recorded_before (exclusive)." },
    })
    .get("/recordings/:id", ({ principal, params }) => getRecording(db, authorize(principal, "recordings:read"), params.id), {
      params: idParam,
      detail: { summary: "Get a recording", description: "Scope recordings:read." },
    })
    .get("/recordings/:id/audio", ({ principal, params, request }) => downloadAudio(deps, authorize(principal, "recordings:read"), params.id, request.headers.get("range")), {
      params: idParam,
      detail: { summary: "Download the original audio", description: "Scope recordings:read. Honours a single Range (206, or 416 when unsatisfiable)." },
    })
    .delete(
      "/recordings/:id",
      ({ principal, params, set }) => {
        deleteRecording(deps, authorize(principal, "recordings:write"), params.id, clock.now());
        set.status = 204;
      },
      { params: idParam, detail: { summary: "Delete a recording", description: "Scope recordings:write. Deletes its transcriptions, summaries and stored bytes." } },
    );
}
