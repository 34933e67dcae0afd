import { z } from "zod";
import { pageQuery } from "../../http/pagination";
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
export type ListSummariesQuery = z.infer<typeof listSummariesQuery>;

export type SummaryFailureCode = "processing_error" | "timeout" | "content_policy_violation";

/** Summary of spec 2.8, every field always present. */
export type Summary = {
  id: string;
  transcription_id: string;
  recording_id: string;
  status: "processing" | "completed" | "failed";
  template: TemplateName;
  /** What the template produces: summary, or medical_note for clinical. */
  format: string;
  text: string | null;
  /** The output as the template's JSON schema shapes it; text is its rendering. */
  structured: Record<string, unknown> | null;
  error: { code: SummaryFailureCode; message: string } | null;
  model: string | null;
  /** The prompt file's version, e.g. general.v1. */
  prompt_version: string;
  created_at: string;
  started_at: string | null;
  completed_at: string | null;
  failed_at: string | null;
};

/** Spec 6 payloads: exactly these fields of the record, per event. */
export const SUMMARY_EVENT_FIELDS = {
  "summary.started": ["id", "transcription_id", "recording_id", "status", "template", "created_at", "started_at"],
  "summary.completed": ["id", "transcription_id", "recording_id", "status", "text", "template", "created_at", "completed_at"],
  "summary.failed": ["id", "transcription_id", "recording_id", "status", "error", "failed_at"],
} as const satisfies Record<string, readonly (keyof Summary)[]>;
