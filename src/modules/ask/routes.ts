import { Elysia } from "elysia";
import { z } from "zod";
import type { Deps } from "../../deps";
import { authentication, authorize } from "../../http/auth";
import { idempotency } from "../../http/idempotency";
import { pageOf, pageQuery } from "../../http/pagination";
import { idParam, noContent } from "../../http/schemas";
import { askMessageSchema, askResultSchema, askSessionSchema, createSessionBody, listSessionsQuery, messageBody } from "./schema";
import { createSession, deleteSession, getSession, listMessages, listSessions, postMessage } from "./service";

const ERRORS =
  "404 unknown session or recording; 409 transcription_not_ready (recording scope); 413 transcript_too_large; 502 model_failure (the question is kept: retry).";

export function askRoutes(deps: Deps) {
  return new Elysia({ name: "parley.ask", detail: { tags: ["Ask"] } })
    .use(authentication(deps))
    .use(idempotency(deps))
    .post(
      "/ask/sessions",
      async ({ principal, body, set }) => {
        const result = await createSession(deps, authorize(principal, "ask:write"), body);
        // The first turn's answer when the request asked something, else the new session.
        set.status = body.initial_message ? 200 : 201;
        return result;
      },
      {
        idempotent: true,
        body: createSessionBody,
        response: { 200: askResultSchema, 201: askSessionSchema },
        detail: {
          summary: "Create an Ask session",
          description: `Scope ask:write. Scope {type: recording, recording_id} | {type: library} | {type: selected, recording_ids}; folder is reserved (422). With initial_message: 200 and the Ask result; without: 201 and the session. ${ERRORS}`,
        },
      },
    )
    .get("/ask/sessions", ({ principal, query }) => listSessions(deps, authorize(principal, "ask:read"), query), {
      query: listSessionsQuery,
      response: { 200: pageOf(askSessionSchema) },
      detail: { summary: "List Ask sessions", description: "Scope ask:read. Newest first; end-user-scoped keys see their own only." },
    })
    .get("/ask/sessions/:id", ({ principal, params }) => getSession(deps, authorize(principal, "ask:read"), params.id), {
      params: idParam,
      response: { 200: askSessionSchema },
      detail: { summary: "Get an Ask session", description: "Scope ask:read." },
    })
    .delete(
      "/ask/sessions/:id",
      ({ principal, params, set }) => {
        deleteSession(deps, authorize(principal, "ask:write"), params.id);
        set.status = 204;
      },
      { params: idParam, response: noContent, detail: { summary: "Delete an Ask session", description: "Scope ask:write. Its messages go with it." } },
    )
    .post("/ask/sessions/:id/messages", ({ principal, params, body }) => postMessage(deps, authorize(principal, "ask:write"), params.id, body), {
      idempotent: true,
      params: idParam,
      body: messageBody,
      response: { 200: askResultSchema },
      detail: { summary: "Ask a question in a session", description: `Scope ask:write. Earlier turns are part of the prompt. ${ERRORS}` },
    })
    .get("/ask/sessions/:id/messages", ({ principal, params, query }) => listMessages(deps, authorize(principal, "ask:read"), params.id, query), {
      params: idParam,
      query: z.object(pageQuery),
      response: { 200: pageOf(askMessageSchema) },
      detail: { summary: "List a session's messages", description: "Scope ask:read. Newest first, user and assistant messages alike." },
    });
}
