import type { Segment } from "../transcriptions/schema";
import type { Citation, SummaryItem, SummarySection } from "./schema";
import type { OutputSchema } from "./templates";

/** Fields that head a summary rather than state something (general's title): plain text, no citations. */
const HEADINGS = new Set(["title"]);
/** At most this many segments back one statement: the most direct ones, not a whole stretch. */
const MAX_CITATIONS = 4;
/** A prose field is written as sentences of at most this many characters each... */
const SENTENCE_CHARS = 300;
/** ...and gets one sentence for every this many characters the template allows it. */
const CHARS_PER_SENTENCE = 200;

/**
 * One statement and the numbers of the segments it rests on, as one JSON array: the sentence,
 * then the numbers (`["The budget was approved.", 3, 7]`). The same answer as an object per
 * statement is about a fifth more tokens, all of them written one at a time (decision 232).
 * The numbers are an enum of the transcript's own (1..count), so a grammar-constrained model
 * can only name segments that exist; a provider that ignores the schema is checked again when
 * the answer is read.
 */
function statement(maxLength: number, count: number) {
  const segments = count > 0 ? { enum: Array.from({ length: count }, (_, i) => i + 1) } : { type: "integer" };
  return {
    type: "array",
    prefixItems: [{ type: "string", maxLength }],
    items: segments,
    minItems: 1,
    maxItems: 1 + (count > 0 ? MAX_CITATIONS : 0),
  };
}

/**
 * The schema the model answers in: the template's, with every field but a heading turned into
 * a list of statements with citations. A prose field becomes its sentences; a list keeps its
 * bullets. The template's bounds carry over, so the longest answer stays known.
 */
export function citedSchema(schema: OutputSchema, segmentCount: number): OutputSchema {
  const properties: OutputSchema["properties"] = {};
  for (const [key, p] of Object.entries(schema.properties)) {
    if (HEADINGS.has(key)) properties[key] = p;
    else if (p.type === "array")
      properties[key] = { type: "array", title: p.title, items: statement(p.items?.maxLength ?? 200, segmentCount), maxItems: p.maxItems };
    else {
      const chars = p.maxLength ?? 1000;
      const items = statement(Math.min(chars, SENTENCE_CHARS), segmentCount);
      properties[key] = { type: "array", title: p.title, items, maxItems: Math.ceil(chars / CHARS_PER_SENTENCE) };
    }
  }
  return { type: "object", properties, required: schema.required, additionalProperties: false };
}

/**
 * A statement as the model wrote it: the sentence and its numbers in one array; or (a provider
 * ignoring the schema) an object with text and segments, as the v2 prompts asked, or bare text.
 */
function readStatement(value: unknown): { text: string; numbers: unknown[] } {
  if (typeof value === "string") return { text: value.trim(), numbers: [] };
  if (Array.isArray(value)) {
    const [text, ...numbers] = value;
    return { text: typeof text === "string" ? text.trim() : "", numbers };
  }
  if (!value || typeof value !== "object") return { text: "", numbers: [] };
  const { text, segments } = value as { text?: unknown; segments?: unknown };
  return { text: typeof text === "string" ? text.trim() : "", numbers: Array.isArray(segments) ? segments : [] };
}

/** The segments a statement names, as citations; a number that is no segment of the transcript is dropped. */
function citationsOf(numbers: unknown[], segments: Segment[], recordingId: string): Citation[] {
  const seen = new Set<number>();
  const citations: Citation[] = [];
  for (const n of numbers) {
    if (typeof n !== "number" || !Number.isInteger(n) || n < 1 || n > segments.length || seen.has(n)) continue;
    seen.add(n);
    const segment = segments[n - 1]!;
    citations.push({ recording_id: recordingId, start_ms: Math.round(segment.start * 1000), end_ms: Math.round(segment.end * 1000) });
  }
  return citations;
}

export type CitedSummary = { structured: Record<string, unknown>; sections: SummarySection[] };

/**
 * Reads the model's cited answer: `sections` has every statement with the segments it rests on
 * (none: supported false), `structured` the template's own shape (a prose field's sentences
 * joined, a list's bullets), which the text rendering, exports and redaction read as before.
 */
export function readCitedAnswer(schema: OutputSchema, answer: Record<string, unknown>, segments: Segment[], recordingId: string): CitedSummary {
  const structured: Record<string, unknown> = {};
  const sections: SummarySection[] = [];
  for (const [key, p] of Object.entries(schema.properties)) {
    const value = answer[key];
    if (HEADINGS.has(key)) {
      structured[key] = typeof value === "string" ? value.trim() : "";
      continue;
    }
    const items: SummaryItem[] = (Array.isArray(value) ? value : typeof value === "string" ? [value] : [])
      .map(readStatement)
      .filter((s) => s.text)
      .map((s) => {
        const citations = citationsOf(s.numbers, segments, recordingId);
        return { text: s.text, supported: citations.length > 0, citations };
      });
    const list = p.type === "array";
    structured[key] = list ? items.map((i) => i.text) : items.map((i) => i.text).join(" ");
    sections.push({ key, title: p.title, list, items });
  }
  return { structured, sections };
}
