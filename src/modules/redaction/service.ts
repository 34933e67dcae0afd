import type { Database } from "bun:sqlite";
import type { Config } from "../../config";
import type { Llm } from "../../engines/llm";
import type { Tenant } from "../../tenancy";
import { findPii, type KnownIdentifiers, redactText } from "./detect";
import { findLlmPass, insertLlmPass, type LlmPass } from "./store";

export { findIdentifiersWithLlm, LlmPassFailure } from "./llm-pass";
export type { LlmPass };

/** What redaction reads of a transcription: its texts and who spoke them. */
type TranscriptLike = {
  text: string | null;
  segments: readonly { text: string; speaker: string; words?: unknown }[];
  speakers: readonly { id: string; label: string }[];
};

/** What redaction reads of a summary: its rendering, its structured output and its cited statements. */
type SummaryLike = { text: string | null; structured: Record<string, unknown> | null; sections: { items: { text: string }[] }[] | null };

/** An unnamed speaker: its id (SPEAKER_2) or default label (Speaker 2). */
const GENERIC_SPEAKER = /^(?:SPEAKER_|Speaker )\d+$/;

const redact = (text: string, known: KnownIdentifiers) => redactText(text, findPii(text, known));

/**
 * A copy of the transcription with identifiers replaced by their kind (`[NAME]`, `[PHONE]`,
 * ...) in its text and every segment. A speaker named after a person (a known voice) is
 * `[NAME]`, and that name is redacted wherever else it is said.
 */
export function redactTranscript<T extends TranscriptLike>(transcript: T, known: KnownIdentifiers = {}): T {
  const spokenNames = transcript.speakers.map((s) => s.label).filter((label) => !GENERIC_SPEAKER.test(label));
  // Names found in the whole text are known in every segment: a segment split at a turn
  // change can hold "Lovelace" without the "my name is Ada" that marks it as a name.
  const text = transcript.text ?? "";
  const namesInText = findPii(text, { names: spokenNames })
    .filter((span) => span.kind === "name")
    .map((span) => text.slice(span.start, span.end));
  const all: KnownIdentifiers = { names: [...(known.names ?? []), ...spokenNames, ...namesInText], found: known.found };
  const speakerLabel = (label: string) => (GENERIC_SPEAKER.test(label) ? label : "[NAME]");
  return {
    ...transcript,
    text: transcript.text === null ? null : redact(transcript.text, all),
    segments: transcript.segments.map((segment) => {
      const text = redact(segment.text, all);
      // A segment whose text lost an identifier loses its words, which still spell it (decision 185).
      const { words: _, ...rest } = segment;
      return { ...(text === segment.text ? segment : rest), text, speaker: speakerLabel(segment.speaker) };
    }),
    speakers: transcript.speakers.map((speaker) => ({ ...speaker, label: speakerLabel(speaker.label) })),
  };
}

/** Every string inside a JSON value redacted, its shape kept. */
function redactJson(value: unknown, known: KnownIdentifiers): unknown {
  if (typeof value === "string") return redact(value, known);
  if (Array.isArray(value)) return value.map((v) => redactJson(v, known));
  if (value && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redactJson(v, known)]));
  return value;
}

/** A copy of the summary with identifiers replaced in its text, every string of its structured output and every statement (citations kept). */
export function redactSummary<T extends SummaryLike>(summary: T, known: KnownIdentifiers = {}): T {
  return {
    ...summary,
    text: summary.text === null ? null : redact(summary.text, known),
    structured: summary.structured === null ? null : (redactJson(summary.structured, known) as Record<string, unknown>),
    sections: summary.sections?.map((s) => ({ ...s, items: s.items.map((item) => ({ ...item, text: redact(item.text, known) })) })) ?? null,
  };
}

/** Whether completed transcriptions get the language model's pass: when the local model is installed, unless PARLEY_REDACTION_LLM=off (decision 108), or on the remote LLM when opted in (decision 188). */
export function llmPassRuns(deps: { config: Pick<Config, "redactionLlm">; engines: { llm: Llm } }): boolean {
  if (deps.config.redactionLlm === "openai_compatible") return true;
  return deps.config.redactionLlm === "auto" && deps.engines.llm.installed();
}

/** The model's pass over a transcription, if it ran. */
export function llmPassOf(db: Database, tenant: Tenant, transcriptionId: string): LlmPass | null {
  return findLlmPass(db, tenant, transcriptionId);
}

/** Stores the model's pass over a transcription; false when one was stored before (a repeated job). */
export function recordLlmPass(db: Database, tenant: Tenant, transcriptionId: string, pass: LlmPass): boolean {
  return insertLlmPass(db, tenant, transcriptionId, pass);
}

/** The response header that says which passes a redacted read went through. */
export const REDACTION_HEADER = "parley-redaction";

/**
 * Its value: the rules always ran; the model's pass over the transcription `completed`,
 * `failed`, or has `not_run` (no local LLM, or its job has not finished), so a client can
 * tell a view that the model also checked from one it has not (decision 111).
 */
export function redactionPasses(db: Database, tenant: Tenant, transcriptionId: string): string {
  return `rules; model=${findLlmPass(db, tenant, transcriptionId)?.status ?? "not_run"}`;
}

/** What redacting a transcription, or a summary of it, adds to the rules: the identifiers its model pass found. */
export function identifiersFound(db: Database, tenant: Tenant, transcriptionId: string): KnownIdentifiers {
  return { found: findLlmPass(db, tenant, transcriptionId)?.identifiers ?? [] };
}
