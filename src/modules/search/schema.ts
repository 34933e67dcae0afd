import { z } from "zod";
import { isoDateTime } from "../../http/schemas";

/** POST /recordings/search body (spec 4.3). */
export const searchBody = z.object({
  query: z.string().min(1).max(1000),
  end_user_id: z.string().min(1).max(100).optional().meta({
    description:
      "Required unless the key is scoped to an end user (then it is that end user; naming another is 403). Left out with any other key: 422 validation_error, param end_user_id.",
  }),
  recording_ids: z.array(z.string().min(1).max(100)).max(100).optional(),
  recorded_after: isoDateTime.optional(),
  recorded_before: isoDateTime.optional(),
  limit: z.number().int().min(1).max(50).default(8),
});
export type SearchBody = z.infer<typeof searchBody>;

/** Search result of spec 2.10: a transcript chunk and its relevance. */
export const searchResultSchema = z
  .object({
    chunk_id: z.string(),
    recording_id: z.string(),
    transcription_id: z.string(),
    chunk_text: z.string(),
    speaker: z.string().nullable(),
    start_ms: z.number().int(),
    end_ms: z.number().int(),
    recorded_at: isoDateTime.nullable(),
    score: z.number(),
  })
  .meta({ id: "SearchResult" });
export type SearchResult = z.infer<typeof searchResultSchema>;

/** POST /recordings/search: results best first. */
export const searchResponseSchema = z.object({ results: z.array(searchResultSchema) }).meta({ id: "SearchResponse" });
