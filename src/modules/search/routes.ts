import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import { authentication, authorize } from "../../http/auth";
import { searchBody, searchResponseSchema } from "./schema";
import { searchRecordings } from "./service";

export function searchRoutes(deps: Deps) {
  return new Elysia({ name: "parley.search", detail: { tags: ["Search"] } })
    .use(authentication(deps))
    .post("/recordings/search", ({ principal, body }) => searchRecordings(deps, authorize(principal, "recordings:read", { content: true }), body), {
      body: searchBody,
      response: { 200: searchResponseSchema },
      detail: {
        summary: "Search an end user's transcripts",
        description:
          "Scope recordings:read. Hybrid semantic (vector KNN) and keyword (BM25) search over transcript chunks of recordings with a completed transcription, fused by reciprocal rank. end_user_id is required unless the key is end-user-scoped.",
      },
    });
}
