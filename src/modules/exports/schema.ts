import { z } from "zod";
import { pageQuery } from "../../http/pagination";
import { isoDateTime } from "../../http/schemas";

/** POST /exports: what goes into the archive (one end user's recordings, or named ones), optionally within a creation period. */
export const createExportBody = z.strictObject({
  matter: z.string().trim().min(1).max(200).optional(),
  end_user_id: z.string().min(1).max(100).optional(),
  recording_ids: z.array(z.string().min(1).max(100)).min(1).max(1000).optional(),
  created_after: isoDateTime.optional(),
  created_before: isoDateTime.optional(),
  /** Encrypts the archive (AES-256-GCM, key from scrypt); never stored once the archive is built. */
  passphrase: z.string().min(12).max(1024).optional(),
});
export type CreateExportBody = z.infer<typeof createExportBody>;

export const listExportsQuery = z.object({ ...pageQuery });
export type ListExportsQuery = z.infer<typeof listExportsQuery>;

export const exportSchema = z
  .object({
    id: z.string(),
    /** deleted (DELETE) and expired (PARLEY_EXPORT_RETENTION_DAYS): the archive is erased, the record stays (decision 107). */
    status: z.enum(["processing", "completed", "failed", "deleted", "expired"]),
    matter: z.string().nullable(),
    end_user_id: z.string().nullable(),
    created_after: isoDateTime.nullable(),
    created_before: isoDateTime.nullable(),
    recording_ids: z.array(z.string()),
    encrypted: z.boolean(),
    /** When completed: GET it with the same Authorization. */
    download_url: z.string().nullable(),
    sha256: z.string().nullable(),
    size_bytes: z.number().int().nullable(),
    error: z.object({ code: z.string(), message: z.string() }).nullable(),
    created_at: isoDateTime,
    completed_at: isoDateTime.nullable(),
    failed_at: isoDateTime.nullable(),
    /** When the archive was erased (status deleted or expired). */
    erased_at: isoDateTime.nullable(),
  })
  .meta({ id: "Export" });
export type Export = z.infer<typeof exportSchema>;
