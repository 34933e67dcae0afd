import type { Deps } from "../../../deps";
import { notFound } from "../../../http/access";
import type { Principal } from "../../../http/auth";
import { ApiError } from "../../../http/errors";
import { findRecording } from "../../recordings/service";
import { RENDERERS } from "../renderings";
import { revisionsOf } from "../revisions";
import { atRevision, disclosedIn, findVisibleStoredTranscription } from "../service";
import { renderLegalDocx } from "./docx";
import { markInaudible } from "./inaudible";
import { layOutLegalTranscript } from "./legal";
import { renderLegalPdf } from "./pdf";
import { EXPORT_FORMATS, type ExportQuery } from "./schema";

export type ExportFile = { body: Uint8Array<ArrayBuffer> | string; contentType: string; filename: string };

/**
 * GET /transcriptions/{id}/export: the finished transcript at its latest revision (or
 * ?revision=N) as a file. Segments below `inaudible_below` confidence read [inaudible
 * hh:mm:ss] in every format but JSON, which carries the confidences themselves. Audited as
 * an export of the content, like a read.
 */
export async function exportTranscription(
  deps: Pick<Deps, "db" | "audit" | "clock">,
  principal: Principal,
  id: string,
  query: ExportQuery,
): Promise<ExportFile> {
  const { db } = deps;
  const stored = findVisibleStoredTranscription(db, principal, id);
  if (stored.record.status !== "completed") {
    throw new ApiError("transcription_not_ready", `Transcription ${id} is ${stored.record.status}; it can be exported once it has completed.`);
  }
  const transcription = atRevision(db, principal, stored.record, query.revision);
  await deps.audit.access(principal, "transcription.export", [transcription.id, transcription.recording_id], disclosedIn(db, principal, transcription));
  const { format } = query;
  const file = (body: Uint8Array<ArrayBuffer> | string) => ({
    body,
    contentType: EXPORT_FORMATS[format],
    filename: `${id}-revision-${transcription.revision}.${format}`,
  });
  if (format === "json") return file(`${JSON.stringify(transcription, null, 2)}\n`);
  const text = markInaudible(query.inaudible_below);
  if (format === "txt" || format === "srt" || format === "vtt") {
    return file(RENDERERS[format]({ speakers: transcription.speakers, segments: transcription.segments.map((s) => ({ ...s, text: text(s) })) }));
  }
  const recording = findRecording(db, principal, transcription.recording_id);
  if (!recording) throw new ApiError("not_found", notFound.transcription(id));
  const revisions = revisionsOf(db, principal, stored.record)
    .filter((r) => r.revision <= transcription.revision)
    .reverse();
  const now = deps.clock.now();
  const document = layOutLegalTranscript({ transcription, recording, modelSha256: stored.modelSha256, revisions }, text, now.toISOString());
  return file(format === "pdf" ? await renderLegalPdf(document, now) : await renderLegalDocx(document));
}
