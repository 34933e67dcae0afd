import { z } from "zod";
import { isoDateTime } from "../../http/schemas";

/** The longest a corrected segment's text may be. */
export const MAX_SEGMENT_TEXT = 10_000;

/**
 * One correction of a segment: its text, its speaker, or both. A speaker is an existing
 * speaker's id or name, or a new name; `apply_to: "speaker"` renames the segment's speaker
 * wherever it speaks (the whole voice) rather than moving this one segment.
 */
const segmentEdit = {
  text: z.string().trim().min(1).max(MAX_SEGMENT_TEXT).optional(),
  speaker: z.string().trim().min(1).max(100).optional(),
  apply_to: z.enum(["segment", "speaker"]).default("segment"),
};
const needsAChange = (e: { text?: string; speaker?: string }) => e.text !== undefined || e.speaker !== undefined;
const nothingToChange = { message: "give text, speaker or both", path: ["text"] };

export const segmentEditBody = z.strictObject(segmentEdit).refine(needsAChange, nothingToChange);
export type SegmentEdit = z.infer<typeof segmentEditBody>;

export const segmentIndexParam = z.object({ id: z.string().min(1).max(100), index: z.coerce.number().int().min(0) });

/** PATCH /transcriptions/{id}/segments: several corrections made as one revision, in order. */
export const bulkEditBody = z.strictObject({
  segments: z
    .array(z.strictObject({ index: z.number().int().min(0), ...segmentEdit }).refine(needsAChange, nothingToChange))
    .min(1)
    .max(1000),
});
export type BulkEditBody = z.infer<typeof bulkEditBody>;

/** POST /transcriptions/{id}/revisions: undo, as a new revision with an earlier one's content. */
export const restoreBody = z.strictObject({ restore: z.number().int().min(0) });

/** ?revision=N on reads: absent, the latest. */
export const revisionQuery = { revision: z.coerce.number().int().min(0).optional() };

/** What a revision changed: a segment's text or speaker, or a speaker's name (label). */
export const changeSchema = z.union([
  z.object({ segment: z.number().int(), field: z.enum(["text", "speaker"]), from: z.string(), to: z.string() }),
  z.object({ speaker_id: z.string(), field: z.literal("label"), from: z.string(), to: z.string() }),
]);
export type Change = z.infer<typeof changeSchema>;

/** Who made a revision; null for the machine's original. */
export const authorSchema = z.object({ type: z.string(), id: z.string().nullable(), email: z.string().nullable() });
export type Author = z.infer<typeof authorSchema>;

export const revisionSchema = z
  .object({
    transcription_id: z.string(),
    revision: z.number().int().min(0),
    author: authorSchema.nullable(),
    changes: z.array(changeSchema),
    /** An undo: the revision whose content this one restores. */
    restored_from: z.number().int().nullable(),
    created_at: isoDateTime,
  })
  .meta({ id: "TranscriptionRevision" });
export type Revision = z.infer<typeof revisionSchema>;
