import { z } from "zod";
import { pageQuery } from "../../http/pagination";
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
export type TranscriptionFailureCode = "audio_quality_insufficient" | "audio_too_short" | "audio_format_unsupported" | "processing_error" | "timeout";

export type Segment = { start: number; end: number; text: string; speaker: string; confidence: number };
export type Speaker = { id: string; label: string };

/** Transcription of spec 2.8, every field always present; model and diarization say what produced it. */
export type Transcription = {
  id: string;
  recording_id: string;
  status: "processing" | "completed" | "failed";
  language: string | null;
  text: string | null;
  duration_seconds: number | null;
  segments: Segment[];
  speakers: Speaker[];
  error: { code: TranscriptionFailureCode; message: string } | null;
  model: string | null;
  /** The diarizer model, or "none" when every segment is SPEAKER_1; null until completed. */
  diarization: string | null;
  created_at: string;
  started_at: string | null;
  completed_at: string | null;
  failed_at: string | null;
};

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
