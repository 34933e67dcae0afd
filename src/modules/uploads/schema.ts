import { z } from "zod";

export const uploadUrlBody = z.object({
  content_type: z.string().min(1).max(255).optional(),
  /** When given, the PUT must carry exactly this many bytes; empty bodies are refused, so at least 1. */
  file_size_bytes: z.number().int().min(1).optional(),
  /** Streaming uploads: the URL is for this numbered chunk (0-based) rather than the whole file. */
  chunk_index: z.number().int().min(0).max(100_000).optional(),
});
export type UploadUrlBody = z.infer<typeof uploadUrlBody>;

export const uploadCompleteBody = z.object({
  sha256: z.string().regex(/^[0-9a-f]{64}$/, "lowercase hex SHA-256 of the whole file").optional(),
  file_size_bytes: z.number().int().min(0).optional(),
  upload_attempt_id: z.string().min(1).max(255).optional(),
  client_version: z.string().min(1).max(255).optional(),
});
export type UploadCompleteBody = z.infer<typeof uploadCompleteBody>;

export type UploadUrl = { upload_url: string; method: "PUT"; headers: Record<string, string>; expires_at: string };

/** Body of a successful PUT to an upload URL. */
export type UploadReceipt = { recording_id: string; chunk_index: number | null; file_size_bytes: number };
