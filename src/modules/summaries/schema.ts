import { z } from "zod";
import { pageQuery } from "../../http/pagination";
import { jobTimestamps } from "../../http/schemas";
import { SUMMARY_TEMPLATES, type SummaryTemplateName } from "../config/schema";

export const TEMPLATES = SUMMARY_TEMPLATES;
export type TemplateName = SummaryTemplateName;

export const createSummaryBody = z.strictObject({
  transcription_id: z.string().min(1).max(100),
  template: z.enum(TEMPLATES).default("general"),
});
export type CreateSummaryBody = z.infer<typeof createSummaryBody>;

export const listSummariesQuery = z.object({
  ...pageQuery,
  transcription_id: z.string().min(1).max(100).optional(),
});
/** What GET /summaries/{id}/export writes: fhir, a FHIR R4 Bundle of a clinical note. */
export const EXPORT_FORMATS = ["fhir"] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];
export const exportSummaryQuery = z.strictObject({ format: z.enum(EXPORT_FORMATS) });

export type ListSummariesQuery = z.infer<typeof listSummariesQuery>;

const FAILURE_CODES = ["processing_error", "timeout", "content_policy_violation"] as const;
export type SummaryFailureCode = (typeof FAILURE_CODES)[number];

/** A moment of a recording a statement rests on: one transcript segment, in ms from the start of the audio. */
export const citationSchema = z.object({ recording_id: z.string(), start_ms: z.int(), end_ms: z.int() }).meta({ id: "Citation" });
export type Citation = z.infer<typeof citationSchema>;

/** One sentence or bullet of a summary; supported is false when it cites no segment that exists. */
const summaryItemSchema = z.object({ text: z.string(), supported: z.boolean(), citations: z.array(citationSchema) });
export type SummaryItem = z.infer<typeof summaryItemSchema>;

/** One field of the template's output (title aside), as statements with their evidence; list: bullets rather than prose. */
const summarySectionSchema = z.object({ key: z.string(), title: z.string(), list: z.boolean(), items: z.array(summaryItemSchema) });
export type SummarySection = z.infer<typeof summarySectionSchema>;

/** Summary of spec 2.8, every field always present. */
export const summarySchema = z
  .object({
    id: z.string(),
    transcription_id: z.string(),
    recording_id: z.string(),
    status: z.enum(["processing", "completed", "failed"]),
    template: z.enum(TEMPLATES),
    /** What the template produces: summary, or medical_note for clinical. */
    format: z.string(),
    text: z.string().nullable(),
    /** The output as the template's JSON schema shapes it; text is its rendering. */
    structured: z.record(z.string(), z.unknown()).nullable(),
    /** Each statement of a completed summary with the segments it rests on (decision 159); null until completed, and for one made before citations. */
    sections: z.array(summarySectionSchema).nullable(),
    error: z.object({ code: z.enum(FAILURE_CODES), message: z.string() }).nullable(),
    model: z.string().nullable(),
    /** The prompt file's version, e.g. general.v1. */
    prompt_version: z.string(),
    ...jobTimestamps,
  })
  .meta({ id: "Summary" });
export type Summary = z.infer<typeof summarySchema>;

/** Spec 6 payloads: exactly these fields of the record, per event. */
export const SUMMARY_EVENT_FIELDS = {
  "summary.started": ["id", "transcription_id", "recording_id", "status", "template", "created_at", "started_at"],
  "summary.completed": ["id", "transcription_id", "recording_id", "status", "text", "template", "created_at", "completed_at"],
  "summary.failed": ["id", "transcription_id", "recording_id", "status", "error", "failed_at"],
} as const satisfies Record<string, readonly (keyof Summary)[]>;
