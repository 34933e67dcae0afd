import { z } from "zod";
import { pageQuery } from "../../http/pagination";
import { failureSchema, isoDateTime, metadataOut, metadataSchema } from "../../http/schemas";

export const RECORDING_STATUSES = ["pending", "streaming", "uploaded", "processing", "completed", "failed", "integrity_failure"] as const;
export type RecordingStatus = (typeof RECORDING_STATUSES)[number];
/** Statuses in which bytes may still be uploaded (spec 3.3 "any pre-upload state"). */
export const PRE_UPLOAD: readonly RecordingStatus[] = ["pending", "streaming"];

export const UPLOAD_METHODS = ["ble", "wifi_direct", "4g_direct", "unknown"] as const;
export const SOURCES = ["device", "app_import", "api_upload"] as const;

/**
 * Media types of the formats Parley decodes (wav, mp3, flac, ogg/opus, m4a/aac, webm/opus),
 * under the names browsers and recorders give them. A recording's mime_type is one of these,
 * bare or with a codecs parameter and nothing else (decision 113): it is shown and returned,
 * never used as a download's Content-Type, and a stored text/html or CR/LF is refused up front.
 */
const AUDIO_TYPES = new Set([
  "audio/wav",
  "audio/x-wav",
  "audio/wave",
  "audio/vnd.wave",
  "audio/mpeg",
  "audio/mp3",
  "audio/x-mpeg",
  "audio/flac",
  "audio/x-flac",
  "audio/ogg",
  "audio/opus",
  "video/ogg",
  "audio/mp4",
  "audio/m4a",
  "audio/x-m4a",
  "audio/aac",
  "audio/x-aac",
  "video/mp4",
  "audio/webm",
  "video/webm",
]);
const MEDIA_TYPE = /^([a-z]+\/[a-z0-9.+-]+)(?:[ \t]*;[ \t]*codecs=(?:"[\w.+, -]*"|[\w.+-]+))?$/i;

/** Whether `value` is a mime_type a recording may carry. */
export function isAudioMimeType(value: string): boolean {
  const type = MEDIA_TYPE.exec(value)?.[1]?.toLowerCase();
  return type !== undefined && AUDIO_TYPES.has(type);
}

const audioMimeType = z
  .string()
  .max(255)
  .refine(isAudioMimeType, `must be the audio or video type of a format Parley decodes (${[...AUDIO_TYPES].join(", ")}), with at most a codecs parameter`)
  .describe(
    "The audio's media type, one of a format Parley decodes (audio/wav, audio/mpeg, audio/flac, audio/ogg, audio/opus, audio/mp4, audio/x-m4a, audio/aac, audio/webm, video/webm, video/mp4 and their common aliases), optionally with a codecs parameter; anything else is 422. Informational: downloads are sent as the type the decoder identified.",
  );

export const createRecordingBody = z.object({
  end_user_id: z.string().min(1).max(100).nullish(),
  device_id: z.string().min(1).max(100).nullish(),
  name: z.string().max(500).nullish(),
  recorded_at: isoDateTime.nullish(),
  metadata: metadataSchema.optional(),
  consent_obtained: z.boolean().nullish(),
  source: z.enum(SOURCES).optional(),
  mime_type: audioMimeType.nullish(),
  upload_method: z.enum(UPLOAD_METHODS).nullish(),
});
export type CreateRecordingBody = z.infer<typeof createRecordingBody>;

export const listRecordingsQuery = z.object({
  ...pageQuery,
  end_user_id: z.string().min(1).max(100).optional(),
  device_id: z.string().min(1).max(100).optional(),
  status: z.enum(RECORDING_STATUSES).optional(),
  recorded_after: isoDateTime.optional(),
  recorded_before: isoDateTime.optional(),
});
export type ListRecordingsQuery = z.infer<typeof listRecordingsQuery>;

/**
 * Recording of spec 2.7, every field always present. After chunk_count (which the spec
 * leaves open): consent_obtained, format, codec, sha256 (of the verified original),
 * error ({code, message} or null), uploaded_at, created_at, updated_at.
 */
export const recordingSchema = z
  .object({
    id: z.string(),
    end_user_id: z.string().nullable(),
    device_id: z.string().nullable(),
    name: z.string().nullable(),
    status: z.enum(RECORDING_STATUSES),
    duration_seconds: z.number().int().nullable(),
    file_size_bytes: z.number().int().nullable(),
    recorded_at: isoDateTime.nullable(),
    metadata: metadataOut,
    upload_method: z.enum(UPLOAD_METHODS).nullable(),
    source: z.enum(SOURCES),
    mime_type: z.string().nullable(),
    is_streaming: z.boolean(),
    chunk_count: z.number().int(),
    consent_obtained: z.boolean().nullable(),
    format: z.string().nullable(),
    codec: z.string().nullable(),
    sha256: z.string().nullable(),
    error: failureSchema.nullable(),
    uploaded_at: isoDateTime.nullable(),
    created_at: isoDateTime,
    updated_at: isoDateTime,
  })
  .meta({ id: "Recording" });
export type Recording = z.infer<typeof recordingSchema>;
export type RecordingError = z.infer<typeof failureSchema>;

export const uploadUrlBody = z.object({
  /** Echoed as the PUT's Content-Type (any type: the bytes are stored, never served as it); a header value, so no control characters. */
  content_type: z
    .string()
    .min(1)
    .max(255)
    .regex(/^[\x20-\x7e]+$/, "printable ASCII, as a header value is")
    .optional(),
  /** When given, the PUT must carry exactly this many bytes; empty bodies are refused, so at least 1. */
  file_size_bytes: z.number().int().min(1).optional(),
  /** Streaming uploads: the URL is for this numbered chunk (0-based) rather than the whole file. */
  chunk_index: z.number().int().min(0).max(100_000).optional(),
});
export type UploadUrlBody = z.infer<typeof uploadUrlBody>;

export const uploadCompleteBody = z.object({
  sha256: z
    .string()
    .regex(/^[0-9a-f]{64}$/, "lowercase hex SHA-256 of the whole file")
    .optional(),
  file_size_bytes: z.number().int().min(0).optional(),
  upload_attempt_id: z.string().min(1).max(255).optional(),
  client_version: z.string().min(1).max(255).optional(),
});
export type UploadCompleteBody = z.infer<typeof uploadCompleteBody>;

/** POST /recordings/{id}/upload-url: where and how to PUT the bytes, until expires_at. */
export const uploadUrlSchema = z
  .object({ upload_url: z.string(), method: z.literal("PUT"), headers: z.record(z.string(), z.string()), expires_at: isoDateTime })
  .meta({ id: "UploadUrl" });
export type UploadUrl = z.infer<typeof uploadUrlSchema>;

/** Body of a successful PUT to an upload URL. */
export const uploadReceiptSchema = z
  .object({ recording_id: z.string(), chunk_index: z.number().int().nullable(), file_size_bytes: z.number().int() })
  .meta({ id: "UploadReceipt" });
export type UploadReceipt = z.infer<typeof uploadReceiptSchema>;
