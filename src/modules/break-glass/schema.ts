import { z } from "zod";
import { isoDateTime } from "../../http/schemas";

export const REASON_MIN = 10;
export const REASON_MAX = 500;

export const openBreakGlassBody = z.object({
  end_user_id: z.string().min(1).max(100),
  reason: z
    .string()
    .trim()
    .min(REASON_MIN, `Give a reason of at least ${REASON_MIN} characters: it is recorded with every read.`)
    .max(REASON_MAX, `The reason is at most ${REASON_MAX} characters.`),
});
export type OpenBreakGlassBody = z.infer<typeof openBreakGlassBody>;

export const breakGlassGrantSchema = z.object({
  id: z.string(),
  end_user_id: z.string(),
  admin: z.object({ id: z.string(), email: z.string() }),
  reason: z.string(),
  /** open until expires_at; closed early by closed_by; expired after expires_at. */
  status: z.enum(["open", "closed", "expired"]),
  opened_at: isoDateTime,
  expires_at: isoDateTime,
  closed_at: isoDateTime.nullable(),
  closed_by: z.string().nullable(),
});
export type BreakGlassGrantView = z.infer<typeof breakGlassGrantSchema>;
