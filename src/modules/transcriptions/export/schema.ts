import { z } from "zod";
import { revisionQuery } from "../revisions-schema";

/** What GET /transcriptions/{id}/export writes, by format. */
export const EXPORT_FORMATS = {
  txt: "text/plain; charset=utf-8",
  srt: "application/x-subrip; charset=utf-8",
  vtt: "text/vtt; charset=utf-8",
  json: "application/json",
  docx: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
  pdf: "application/pdf",
} as const;
export type ExportFormat = keyof typeof EXPORT_FORMATS;

export const exportQuery = z.object({
  format: z.enum(Object.keys(EXPORT_FORMATS) as [ExportFormat, ...ExportFormat[]]),
  ...revisionQuery,
  /** Segments the recogniser scored below this (0-1) read [inaudible hh:mm:ss]; 0, the default, marks none. */
  inaudible_below: z.coerce.number().min(0).max(1).default(0),
});
export type ExportQuery = z.infer<typeof exportQuery>;
