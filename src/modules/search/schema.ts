import { z } from "zod";
import { isoDateTime } from "../../http/schemas";

/** POST /recordings/search body (spec 4.3). */
export const searchBody = z.object({
  query: z.string().min(1).max(1000),
  end_user_id: z.string().min(1).max(100).optional(),
  recording_ids: z.array(z.string().min(1).max(100)).max(100).optional(),
  recorded_after: isoDateTime.optional(),
  recorded_before: isoDateTime.optional(),
  limit: z.number().int().min(1).max(50).default(8),
});
export type SearchBody = z.infer<typeof searchBody>;

/** Search result of spec 2.10: a transcript chunk and its relevance. */
export type SearchResult = {
  chunk_id: string;
  recording_id: string;
  transcription_id: string;
  chunk_text: string;
  speaker: string | null;
  start_ms: number;
  end_ms: number;
  recorded_at: string | null;
  score: number;
};
