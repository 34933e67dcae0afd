import { stripReasoning } from "../../engines/llm";
import type { ChatMessage, Completion, Llm } from "../../engines/llm";
import { answerRoom, chunkLines, FRAMING_TOKENS, type RunControl } from "../../engines/llm-budget";
import type { Segment } from "../transcriptions/schema";
import { citedSchema, readCitedAnswer } from "./citations";
import type { SummarySection } from "./schema";
import { MAP_PROMPT, renderSummary, type Template } from "./templates";

/** A summary that cannot be produced, with its spec 6 failure code. */
export class SummaryFailure extends Error {
  constructor(
    readonly code: "processing_error" | "content_policy_violation",
    message: string,
  ) {
    super(message);
  }
}

/** Ordinary prose, to fill the schema's longest answer with so this model's own tokenizer can count it. */
const PROSE = "The team agreed to review the budget on Friday and to send the notes to every participant. ";
/** Map-reduce rounds before giving up: each round shrinks the text at least fourfold. */
const MAX_ROUNDS = 6;

const stamp = (seconds: number) => `${Math.floor(seconds / 60)}:${String(Math.floor(seconds % 60)).padStart(2, "0")}`;

/** The transcript as the prompts describe it: "[n] [m:ss] SPEAKER: text", one line per segment, numbered from 1 for citations. */
export function transcriptLines(segments: Pick<Segment, "start" | "speaker" | "text">[]): string[] {
  return segments.map((s, i) => `[${i + 1}] [${stamp(s.start)}] ${s.speaker}: ${s.text}`);
}

/** The system and user messages of one call: the template's (or the map step's) prompt, and the transcript or notes. */
export const summaryMessages = (system: string, user: string): ChatMessage[] => [
  { role: "system", content: system },
  { role: "user", content: user },
];

async function ask(llm: Llm, system: string, user: string, options: { jsonSchema?: object; maxTokens: number; run: RunControl }): Promise<Completion> {
  const messages = summaryMessages(system, user);
  const { signal, excludeWait } = options.run;
  // Temperature 0: the same transcript gives the same summary (and the same outcome), run after run.
  const completion = await llm.complete({ messages, jsonSchema: options.jsonSchema, maxTokens: options.maxTokens, temperature: 0, signal, excludeWait });
  if (completion.finishReason === "content_filter") throw new SummaryFailure("content_policy_violation", "The model declined to summarise this transcript.");
  return completion;
}

type Bounded = {
  type?: string;
  enum?: unknown[];
  maxLength?: number;
  maxItems?: number;
  prefixItems?: Bounded[];
  items?: Bounded;
  properties?: Record<string, Bounded>;
};

/**
 * The longest answer the schema allows: every string at its maxLength, every array at its
 * maxItems (the grammar enforces both). Template schemas bound every field (tested); the
 * defaults only cover a schema that forgot to.
 */
export function longestAnswer(schema: Bounded): unknown {
  if (schema.properties) return Object.fromEntries(Object.entries(schema.properties).map(([key, s]) => [key, longestAnswer(s)]));
  if (schema.type === "array") {
    const first = (schema.prefixItems ?? []).map(longestAnswer);
    return [...first, ...Array.from({ length: (schema.maxItems ?? 8) - first.length }, () => longestAnswer(schema.items ?? { type: "string" }))];
  }
  if (schema.type === "string") return PROSE.repeat(Math.ceil((schema.maxLength ?? 200) / PROSE.length)).slice(0, schema.maxLength ?? 200);
  if (schema.enum?.length) return schema.enum.at(-1); // segment numbers: the last is the longest
  return 0;
}

/**
 * The room a summary of `segmentCount` segments has: the answer's (its longest form under the
 * schema with citations), and the transcript's (`budget`: beyond it, map-reduce).
 */
export async function summaryRoom(llm: Llm, template: Template, segmentCount: number) {
  const schema = citedSchema(template.schema, segmentCount);
  const context = await llm.contextTokens();
  const outputTokens = await answerRoom(llm, JSON.stringify(longestAnswer(schema)), context);
  const templateTokens = await llm.countTokens(template.prompt);
  const budget = context - outputTokens - FRAMING_TOKENS - Math.max(templateTokens, await llm.countTokens(MAP_PROMPT.prompt));
  return { schema, context, outputTokens, templateTokens, budget };
}

export type GeneratedSummary = { structured: Record<string, unknown>; sections: SummarySection[]; text: string; model: string; mapCalls: number };

/**
 * Summarises a transcript with the template. When it does not fit the model's context,
 * map-reduce: parts are condensed to notes (map), the notes again if need be, and the
 * template runs on the notes (reduce), which keep the segment numbers. Output is constrained
 * by the template's schema with citations: each statement names the segments it rests on.
 */
export async function generateSummary(llm: Llm, template: Template, segments: Segment[], recordingId: string, run: RunControl): Promise<GeneratedSummary> {
  const { schema, context, outputTokens, templateTokens, budget } = await summaryRoom(llm, template, segments.length);
  if (budget < 32) throw new SummaryFailure("processing_error", `The model's context (${context} tokens) is too small for the ${template.name} template.`);

  let lines = transcriptLines(segments);
  let mapCalls = 0;
  for (let round = 0; (await llm.countTokens(lines.join("\n"))) > budget; round++) {
    if (round === MAX_ROUNDS) throw new SummaryFailure("processing_error", "The transcript could not be condensed to fit the model's context.");
    const notes: string[] = [];
    for (const chunk of await chunkLines(llm, lines, budget)) {
      // Notes at most a quarter of the part, so every round shrinks the text.
      const maxTokens = Math.max(16, Math.min(outputTokens, Math.floor(budget / 4)));
      notes.push(stripReasoning((await ask(llm, MAP_PROMPT.prompt, chunk, { maxTokens, run })).text));
      mapCalls++;
    }
    lines = notes.filter(Boolean);
  }

  // The answer may use all the room the input leaves, which is at least outputTokens.
  const input = lines.join("\n");
  const room = context - FRAMING_TOKENS - templateTokens - (await llm.countTokens(input));
  const completion = await ask(llm, template.prompt, input, { jsonSchema: schema, maxTokens: Math.max(outputTokens, room), run });
  const answer = stripReasoning(completion.text);
  let structured: unknown;
  try {
    structured = JSON.parse(answer.slice(answer.indexOf("{"), answer.lastIndexOf("}") + 1));
  } catch {
    throw new SummaryFailure("processing_error", `The model's answer was not valid JSON (finish reason ${completion.finishReason}).`);
  }
  if (!structured || typeof structured !== "object" || Array.isArray(structured))
    throw new SummaryFailure("processing_error", "The model's answer was not a JSON object.");
  const cited = readCitedAnswer(template.schema, structured as Record<string, unknown>, segments, recordingId);
  return { ...cited, text: renderSummary(template, cited.structured), model: llm.model, mapCalls };
}
