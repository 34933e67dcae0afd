import { z } from "zod";
import { pageQuery } from "../../http/pagination";
import { isoDateTime } from "../../http/schemas";

export const createVoiceBody = z.strictObject({
  name: z.string().trim().min(1).max(100),
  /** The end user this voice is (the wearer): their own recordings label them by it. */
  end_user_id: z.string().min(1).max(100).nullish(),
});
export type CreateVoiceBody = z.infer<typeof createVoiceBody>;

export const updateVoiceBody = z.strictObject({ name: z.string().trim().min(1).max(100).optional(), end_user_id: z.string().min(1).max(100).nullish() });
export type UpdateVoiceBody = z.infer<typeof updateVoiceBody>;

export const listVoicesQuery = z.object({ ...pageQuery, end_user_id: z.string().min(1).max(100).optional() });
export type ListVoicesQuery = z.infer<typeof listVoicesQuery>;

export const addSampleBody = z
  .strictObject({ recording_id: z.string().min(1).max(100), start_ms: z.number().int().min(0), end_ms: z.number().int().min(1) })
  .refine((b) => b.end_ms > b.start_ms, { message: "end_ms must be after start_ms", path: ["end_ms"] });
export type AddSampleBody = z.infer<typeof addSampleBody>;

/** A known voice (decision 098). */
export const voiceSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    end_user_id: z.string().nullable(),
    /** How many voiceprints it has; 0 until a sample is added or a speaker is named with remember. */
    sample_count: z.number().int(),
    created_at: isoDateTime,
    updated_at: isoDateTime,
  })
  .meta({ id: "Voice" });
export type Voice = z.infer<typeof voiceSchema>;
