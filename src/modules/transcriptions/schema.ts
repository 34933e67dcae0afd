import { z } from "zod";
import { pageQuery } from "../../http/pagination";
import { jobTimestamps } from "../../http/schemas";
import { languageTag, speakerCount } from "../config/schema";

export const createTranscriptionBody = z
  .strictObject({
    recording_id: z.string().min(1).max(100),
    /** Absent or null: detect the language. */
    language: languageTag.nullish(),
    /** Hints for the diarizer; absent or null: the configuration's (decision 097). */
    min_speakers: speakerCount.nullish(),
    max_speakers: speakerCount.nullish(),
  })
  .refine((b) => b.min_speakers == null || b.max_speakers == null || b.min_speakers <= b.max_speakers, {
    message: "min_speakers must not be above max_speakers",
    path: ["min_speakers"],
  });
export type CreateTranscriptionBody = z.infer<typeof createTranscriptionBody>;

export const listTranscriptionsQuery = z.object({
  ...pageQuery,
  recording_id: z.string().min(1).max(100).optional(),
});
export type ListTranscriptionsQuery = z.infer<typeof listTranscriptionsQuery>;

/** PATCH /transcriptions/{id}/speakers: a name for each speaker id to name. */
export const nameSpeakersBody = z
  .record(
    z.string().regex(/^SPEAKER_\d+$/, "must be a speaker id such as SPEAKER_2"),
    /** remember: also keep the speaker's voiceprint under a known voice of this name, made if new. */
    z.strictObject({ name: z.string().trim().min(1).max(100), remember: z.boolean().optional() }),
  )
  .refine((b) => Object.keys(b).length > 0, 'name at least one speaker, e.g. {"SPEAKER_2": {"name": "Dr. Weber"}}');
export type NameSpeakersBody = z.infer<typeof nameSpeakersBody>;

export const transcriptQuery = z.object({ format: z.enum(["srt", "vtt", "txt"]).default("txt") });

/** Spec 6 transcription failure codes. */
const FAILURE_CODES = ["audio_quality_insufficient", "audio_too_short", "audio_format_unsupported", "processing_error", "timeout"] as const;
export type TranscriptionFailureCode = (typeof FAILURE_CODES)[number];

/** One word of a segment as the engine heard it; times in seconds from the start of the recording (decision 185). */
const wordSchema = z.object({ start: z.number(), end: z.number(), text: z.string(), confidence: z.number().min(0).max(1) }).meta({ id: "TranscriptWord" });
export type Word = z.infer<typeof wordSchema>;
/**
 * words: the segment's words with their times, in order, spelling its text; absent where the
 * engine gave none and where a correction or redaction changed the text (decision 185).
 */
const segmentSchema = z.object({
  start: z.number(),
  end: z.number(),
  text: z.string(),
  speaker: z.string(),
  confidence: z.number().min(0).max(1),
  words: z.array(wordSchema).optional(),
});
export type Segment = z.infer<typeof segmentSchema>;
/** voice_id and score: the known voice the speaker was recognised as (decision 098), absent otherwise. */
const speakerSchema = z.object({ id: z.string(), label: z.string(), voice_id: z.string().optional(), score: z.number().min(0).max(1).optional() });
export type Speaker = z.infer<typeof speakerSchema>;
const speakerTurnSchema = z.object({ speaker: z.string(), start: z.number(), end: z.number() });
/** Which diarizer ran: the weight-free classic one, a neural one, or none (every segment SPEAKER_1). */
export const DIARIZATION_KINDS = ["classic", "neural", "none"] as const;

/** Transcription of spec 2.8, every field always present; model and diarization say what produced it. */
export const transcriptionSchema = z
  .object({
    id: z.string(),
    recording_id: z.string(),
    status: z.enum(["processing", "completed", "failed"]),
    language: z.string().nullable(),
    text: z.string().nullable(),
    duration_seconds: z.number().nullable(),
    segments: z.array(segmentSchema),
    speakers: z.array(speakerSchema),
    /** The diarizer's own turns, before segments were given their speakers; [] until completed. */
    speaker_turns: z.array(speakerTurnSchema),
    error: z.object({ code: z.enum(FAILURE_CODES), message: z.string() }).nullable(),
    model: z.string().nullable(),
    /** Which diarizer ran; null until completed. */
    diarization: z.enum(DIARIZATION_KINDS).nullable(),
    /** Which revision text, segments and speakers are: 0 as the machine made them, each correction one more (decision 154). */
    revision: z.number().int().min(0),
    ...jobTimestamps,
  })
  .meta({ id: "Transcription" });
export type Transcription = z.infer<typeof transcriptionSchema>;

/** Spec 6 payloads: exactly these fields of the record, per event. */
export const TRANSCRIPTION_EVENT_FIELDS = {
  "transcription.started": ["id", "recording_id", "status", "language", "created_at", "started_at"],
  "transcription.completed": ["id", "recording_id", "status", "text", "duration_seconds", "segments", "speakers", "language", "created_at", "completed_at"],
  "transcription.failed": ["id", "recording_id", "status", "error", "created_at", "failed_at"],
} as const satisfies Record<string, readonly (keyof Transcription)[]>;

/**
 * The fields an event carries, taken from the record so payload and record never disagree.
 * A transcription's segments go as spec 6 shows them, without their words: those stay on
 * GET, and would make a long recording's event several times its size (decision 185).
 */
export function eventData<T extends object>(record: T, fields: readonly (keyof T)[]): Record<string, unknown> {
  const value = (f: keyof T) => (f === "segments" ? (record[f] as Segment[]).map(({ words: _, ...segment }) => segment) : record[f]);
  return Object.fromEntries(fields.map((f) => [f, value(f)]));
}
