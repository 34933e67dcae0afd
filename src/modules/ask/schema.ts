import { z } from "zod";
import { pageQuery } from "../../http/pagination";
import { isoDateTime } from "../../http/schemas";
import { searchResultSchema } from "../search/schema";

export const ASK_PROVIDERS = ["llama_cpp", "openai_compatible", "extractive"] as const;
export type AskProvider = (typeof ASK_PROVIDERS)[number];

/** The send-message body (spec 4.5); also the shape of initial_message. */
export const messageBody = z.object({
  content: z.string().min(1).max(10_000),
  provider: z.enum(ASK_PROVIDERS).optional(),
  context_refs: z
    .array(z.object({ type: z.literal("recording"), id: z.string().min(1).max(100) }))
    .max(20)
    .optional(),
});
export type MessageBody = z.infer<typeof messageBody>;

const id = z.string().min(1).max(100);

/** Scope is discriminated on type; folder (spec 4.5) is reserved, so refused like any unknown type, with its own message. */
export const scopeSchema = z.discriminatedUnion(
  "type",
  [
    z.object({ type: z.literal("recording"), recording_id: id }),
    z.object({ type: z.literal("library") }),
    z.object({ type: z.literal("selected"), recording_ids: z.array(id).min(1).max(100) }),
  ],
  { error: (issue) => (isFolderScope(issue.input) ? "Scope type folder is reserved and not supported." : undefined) },
);

function isFolderScope(input: unknown): boolean {
  return typeof input === "object" && input !== null && (input as { type?: unknown }).type === "folder";
}
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

const partSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("text"), text: z.string() }),
  // speaker: the cited passage's dominant speaker (null when mixed); absent from messages written before speakers were cited.
  z.object({ type: z.literal("citation"), recording_id: z.string(), start_ms: z.number().int(), speaker: z.string().nullable().optional() }),
]);
export type Part = z.infer<typeof partSchema>;
const contextRefSchema = z.object({ type: z.literal("recording"), id: z.string() });
export type ContextRef = z.infer<typeof contextRefSchema>;
const tokensSchema = z.object({ input: z.number().int(), output: z.number().int(), cached: z.number().int() });
export type Tokens = z.infer<typeof tokensSchema>;

/** Session of spec 2.9 (plus end_user_id, the owner: the key that may use it and the retrieval boundary). */
export const askSessionSchema = z
  .object({
    id: z.string(),
    end_user_id: z.string().nullable(),
    scope: z.object({ type: z.enum(["recording", "library", "selected"]), recording_ids: z.array(z.string()), recording_title: z.string().nullable() }),
    title: z.string(),
    message_count: z.number().int(),
    last_message_at: isoDateTime.nullable(),
    last_model: z.string().nullable(),
    last_provider: z.string().nullable(),
    created_at: isoDateTime,
    updated_at: isoDateTime,
  })
  .meta({ id: "AskSession" });
export type AskSession = z.infer<typeof askSessionSchema>;

/**
 * Message of spec 2.9. User messages have the same fields: parts holds their text, and
 * tokens, model, provider and finish_reason are null. context_refs is what the user sent.
 */
export const askMessageSchema = z
  .object({
    id: z.string(),
    session_id: z.string(),
    role: z.enum(["user", "assistant"]),
    content: z.string(),
    parts: z.array(partSchema),
    tokens: tokensSchema.nullable(),
    model: z.string().nullable(),
    provider: z.string().nullable(),
    finish_reason: z.string().nullable(),
    context_refs: z.array(contextRefSchema),
    created_at: isoDateTime,
  })
  .meta({ id: "AskMessage" });
export type AskMessage = z.infer<typeof askMessageSchema>;

/** Ask result of spec 2.9: sources only for library and selected scopes. */
export const askResultSchema = z.object({ session_id: z.string(), message: askMessageSchema, sources: z.array(searchResultSchema) }).meta({ id: "AskResult" });
export type AskResult = z.infer<typeof askResultSchema>;
