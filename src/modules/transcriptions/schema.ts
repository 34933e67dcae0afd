import { z } from "zod";
import { pageQuery } from "../../http/pagination";
import { jobTimestamps } from "../../http/schemas";
import { languageTag } from "../config/schema";

export const createTranscriptionBody = z.strictObject({
  recording_id: z.string().min(1).max(100),
  /** Absent or null: detect the language. */
  language: languageTag.nullish(),
});
export type CreateTranscriptionBody = z.infer<typeof createTranscriptionBody>;

export const listTranscriptionsQuery = z.object({
  ...pageQuery,
  recording_id: z.string().min(1).max(100).optional(),
});
export type ListTranscriptionsQuery = z.infer<typeof listTranscriptionsQuery>;

/** Spec 6 transcription failure codes. */
const FAILURE_CODES = ["audio_quality_insufficient", "audio_too_short", "audio_format_unsupported", "processing_error", "timeout"] as const;
export type TranscriptionFailureCode = (typeof FAILURE_CODES)[number];

const segmentSchema = z.object({ start: z.number(), end: z.number(), text: z.string(), speaker: z.string(), confidence: z.number().min(0).max(1) });
export type Segment = z.infer<typeof segmentSchema>;
const speakerSchema = z.object({ id: z.string(), label: z.string() });
export type Speaker = z.infer<typeof speakerSchema>;

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
    error: z.object({ code: z.enum(FAILURE_CODES), message: z.string() }).nullable(),
    model: z.string().nullable(),
    /** The diarizer model, or "none" when every segment is SPEAKER_1; null until completed. */
    diarization: z.string().nullable(),
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

/** The fields an event carries, taken from the record so payload and record never disagree. */
export function eventData<T extends object>(record: T, fields: readonly (keyof T)[]): Record<string, unknown> {
  return Object.fromEntries(fields.map((f) => [f, record[f]]));
}
