import { findPii, type KnownIdentifiers, redactText } from "./detect";

/** What redaction reads of a transcription: its texts and who spoke them. */
type TranscriptLike = {
  text: string | null;
  segments: readonly { text: string; speaker: string }[];
  speakers: readonly { id: string; label: string }[];
};

/** What redaction reads of a summary: its rendering and its structured output. */
type SummaryLike = { text: string | null; structured: Record<string, unknown> | null };

const GENERIC_SPEAKER = /^SPEAKER_\d+$/;

const redact = (text: string, known: KnownIdentifiers) => redactText(text, findPii(text, known));

/**
 * A copy of the transcription with identifiers replaced by their kind (`[NAME]`, `[PHONE]`,
 * ...) in its text and every segment. A speaker named after a person (a known voice) is
 * `[NAME]`, and that name is redacted wherever else it is said.
 */
export function redactTranscript<T extends TranscriptLike>(transcript: T, known: KnownIdentifiers = {}): T {
  const spokenNames = transcript.speakers.map((s) => s.label).filter((label) => !GENERIC_SPEAKER.test(label));
  const all: KnownIdentifiers = { names: [...(known.names ?? []), ...spokenNames] };
  const speakerLabel = (label: string) => (GENERIC_SPEAKER.test(label) ? label : "[NAME]");
  return {
    ...transcript,
    text: transcript.text === null ? null : redact(transcript.text, all),
    segments: transcript.segments.map((segment) => ({ ...segment, text: redact(segment.text, all), speaker: speakerLabel(segment.speaker) })),
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

/** A copy of the summary with identifiers replaced in its text and in every string of its structured output. */
export function redactSummary<T extends SummaryLike>(summary: T, known: KnownIdentifiers = {}): T {
  return {
    ...summary,
    text: summary.text === null ? null : redact(summary.text, known),
    structured: summary.structured === null ? null : (redactJson(summary.structured, known) as Record<string, unknown>),
  };
}
