import { z } from "zod";
import { pageQuery } from "../../http/pagination";
import { isoDateTime } from "../../http/schemas";

/** POST /legal-holds: a matter and exactly one of end_user_id, device_id, recording_id. */
export const createLegalHoldBody = z.strictObject({
  matter: z.string().trim().min(1).max(200),
  end_user_id: z.string().min(1).max(100).optional(),
  device_id: z.string().min(1).max(100).optional(),
  recording_id: z.string().min(1).max(100).optional(),
  note: z.string().max(2000).optional(),
});
export type CreateLegalHoldBody = z.infer<typeof createLegalHoldBody>;

export const listLegalHoldsQuery = z.object({
  ...pageQuery,
  status: z.enum(["active", "released"]).optional(),
});
export type ListLegalHoldsQuery = z.infer<typeof listLegalHoldsQuery>;

/** A legal hold (decision 103): while active, what it covers is neither deleted nor expired. */
export const legalHoldSchema = z
  .object({
    id: z.string(),
    matter: z.string(),
    note: z.string().nullable(),
    end_user_id: z.string().nullable(),
    device_id: z.string().nullable(),
    recording_id: z.string().nullable(),
    status: z.enum(["active", "released"]),
    created_at: isoDateTime,
    released_at: isoDateTime.nullable(),
  })
  .meta({ id: "LegalHold" });
export type LegalHold = z.infer<typeof legalHoldSchema>;
