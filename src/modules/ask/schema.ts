import { z } from "zod";
import { pageQuery } from "../../http/pagination";
import type { SearchResult } from "../search/schema";

export const ASK_PROVIDERS = ["llama_cpp", "openai_compatible", "extractive"] as const;
export type AskProvider = (typeof ASK_PROVIDERS)[number];

/** The send-message body (spec 4.5); also the shape of initial_message. */
export const messageBody = z.object({
  content: z.string().min(1).max(10_000),
  provider: z.enum(ASK_PROVIDERS).optional(),
  context_refs: z.array(z.object({ type: z.literal("recording"), id: z.string().min(1).max(100) })).max(20).optional(),
});
export type MessageBody = z.infer<typeof messageBody>;

const id = z.string().min(1).max(100);

/** Scope is discriminated on type; folder is accepted by the schema only to be refused as reserved, with its own message. */
export const scopeSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("recording"), recording_id: id }),
  z.object({ type: z.literal("library") }),
  z.object({ type: z.literal("selected"), recording_ids: z.array(id).min(1).max(100) }),
  z.looseObject({ type: z.literal("folder") }),
]);
export type ScopeBody = z.infer<typeof scopeSchema>;

/** Session titles are at most this many characters, counted in code points so an emoji counts once. */
export const TITLE_MAX = 200;

export const createSessionBody = z.object({
  scope: scopeSchema,
  initial_message: messageBody.optional(),
  // Trimmed first: a title of spaces alone would show as a blank row in a session list.
  title: z
    .string()
    .trim()
    .min(1)
    .refine((t) => [...t].length <= TITLE_MAX, `Too big: expected at most ${TITLE_MAX} characters`)
    .optional(),
  end_user_id: id.optional(),
});
export type CreateSessionBody = z.infer<typeof createSessionBody>;

export const listSessionsQuery = z.object({ ...pageQuery, end_user_id: id.optional() });
export type ListSessionsQuery = z.infer<typeof listSessionsQuery>;

export type Part = { type: "text"; text: string } | { type: "citation"; recording_id: string; start_ms: number };
export type ContextRef = { type: "recording"; id: string };
export type Tokens = { input: number; output: number; cached: number };

/** Session of spec 2.9 (plus end_user_id, the owner: the key that may use it and the retrieval boundary). */
export type AskSession = {
  id: string;
  end_user_id: string | null;
  scope: { type: "recording" | "library" | "selected"; recording_ids: string[]; recording_title: string | null };
  title: string;
  message_count: number;
  last_message_at: string | null;
  last_model: string | null;
  last_provider: string | null;
  created_at: string;
  updated_at: string;
};

/**
 * Message of spec 2.9. User messages have the same fields: parts holds their text, and
 * tokens, model, provider and finish_reason are null. context_refs is what the user sent.
 */
export type AskMessage = {
  id: string;
  session_id: string;
  role: "user" | "assistant";
  content: string;
  parts: Part[];
  tokens: Tokens | null;
  model: string | null;
  provider: string | null;
  finish_reason: string | null;
  context_refs: ContextRef[];
  created_at: string;
};

/** Ask result of spec 2.9: sources only for library and selected scopes. */
export type AskResult = { session_id: string; message: AskMessage; sources: SearchResult[] };
