import { z } from "zod";
import { isoDateTime } from "../../http/schemas";

/**
 * The MCP tools' arguments and results, written for a model to read: each field says what
 * it is for, and every list is bounded so one call fits an assistant's context.
 */

const recordingId = z.string().min(1).max(100).describe("A recording id (rec_...), as search_conversations or list_recordings return it.");
const after = isoDateTime.optional().describe("Only conversations recorded at or after this instant (ISO 8601 with offset, e.g. 2026-01-10T00:00:00Z).");
const before = isoDateTime.optional().describe("Only conversations recorded before this instant (ISO 8601 with offset).");

/** Search: at most 25 passages, a few thousand words, one call. */
export const searchInput = {
  query: z.string().min(1).max(1000).describe("What to look for, in plain words: a topic, a name, a phrase. Matched by meaning and by keywords."),
  recorded_after: after,
  recorded_before: before,
  limit: z.number().int().min(1).max(25).default(8).describe("How many passages to return, best first (default 8, at most 25)."),
};

const passage = z.object({
  recording_id: z.string(),
  speaker: z.string().nullable().describe("The speaker's name or label (SPEAKER_n when unnamed); null when the passage mixes speakers."),
  start_ms: z.number().int().describe("Where the passage starts in the recording, in milliseconds: cite the moment as recording_id + start_ms."),
  end_ms: z.number().int(),
  recorded_at: isoDateTime.nullable().describe("When the conversation was recorded (null when unknown)."),
  text: z.string(),
  score: z.number().describe("Relevance, higher is better; comparable only within one result."),
});
export const searchOutput = { results: z.array(passage) };

export const askInput = {
  question: z.string().min(1).max(2000).describe("The question, in the user's words."),
  recording_ids: z
    .array(recordingId)
    .min(1)
    .max(20)
    .optional()
    .describe("Answer from these recordings only; left out, the whole library of the end user is searched."),
};

const citation = z.object({ recording_id: z.string(), start_ms: z.number().int(), speaker: z.string().nullable() });
export const askOutput = {
  answer: z.string().describe("The answer; its [n] markers refer to citations[n-1]."),
  citations: z.array(citation).describe("The moments the answer rests on, in the order of its [n] markers."),
  session_id: z.string().describe("The Ask session kept in Parley (the user sees it in the dashboard)."),
};

/** One page of a transcript: 12,000 characters (about 3,000 tokens), then a cursor. */
export const TRANSCRIPT_PAGE_CHARS = 12_000;

export const transcriptInput = {
  recording_id: recordingId,
  start_ms: z.number().int().min(0).optional().describe("Read from this moment (milliseconds); use a search result's start_ms, or next_start_ms to continue."),
  end_ms: z.number().int().min(1).optional().describe("Read up to this moment (milliseconds)."),
};

const line = z.object({ start_ms: z.number().int(), end_ms: z.number().int(), speaker: z.string(), text: z.string() });
export const transcriptOutput = {
  recording_id: z.string(),
  speakers: z.array(z.string()).describe("Everyone who speaks in the recording, by name when named."),
  lines: z.array(line),
  next_start_ms: z.number().int().nullable().describe("More follows within the range asked: call again with start_ms set to this. Null at the end."),
};

export const listRecordingsInput = {
  recorded_after: after,
  recorded_before: before,
  limit: z.number().int().min(1).max(50).default(20).describe("How many recordings (default 20, at most 50), newest first."),
  cursor: z.string().min(1).max(500).optional().describe("next_cursor of the previous call, to continue the list."),
};

const recordingItem = z.object({
  recording_id: z.string(),
  name: z.string().nullable(),
  recorded_at: isoDateTime.nullable(),
  duration_seconds: z.number().int().nullable(),
  status: z.string().describe("completed recordings have a transcript; others are still being processed or failed."),
});
export const listRecordingsOutput = {
  recordings: z.array(recordingItem),
  next_cursor: z.string().nullable().describe("Pass as cursor to see older recordings; null when there are no more."),
};

export const summaryInput = { recording_id: recordingId };
export const summaryOutput = {
  recording_id: z.string(),
  summary_id: z.string(),
  template: z.string(),
  text: z.string(),
};
