import type { Deps } from "../../deps";
import { notFound, ownedBy, visible } from "../../http/access";
import type { Principal } from "../../http/auth";
import { downloadHeaders } from "../../http/downloads";
import { ApiError } from "../../http/errors";
import { findEndUser } from "../end-users/service";
import { loadRecording } from "../recordings/service";
import { type FhirReference, fhirNoteBundle, UNSUPPORTED_MARK } from "./fhir";
import { notePdf } from "./note-pdf";
import type { ExportFormat } from "./schema";
import { findStoredSummary } from "./store";

/** A FHIR literal reference to another server's resource: a type and an id (FHIR's id rule). */
const FHIR_REFERENCE = /^[A-Z][A-Za-z]+\/[A-Za-z0-9\-.]{1,64}$/;
const EXAMPLES = { fhir_subject: "Patient/123", fhir_author: "Practitioner/456" };

/** The recording's metadata.fhir_subject or fhir_author; absent is null, anything but a reference a 422 naming the key. */
function referenceIn(metadata: Record<string, unknown> | null, key: keyof typeof EXAMPLES): FhirReference | null {
  const value = metadata?.[key];
  if (value === undefined || value === null) return null;
  if (typeof value !== "string" || !FHIR_REFERENCE.test(value))
    throw new ApiError("validation_error", `The recording's metadata.${key} must be a FHIR reference such as ${EXAMPLES[key]}.`, { param: `metadata.${key}` });
  return { reference: value };
}

/**
 * GET /summaries/{id}/export?format=fhir: a completed clinical note as a FHIR R4 document
 * Bundle (decision 160). Subject and author come from the recording's metadata
 * (fhir_subject, fhir_author); without an author, the end user who recorded it is named.
 * The read is audited like any read of the summary.
 */
export async function exportSummary(deps: Pick<Deps, "db" | "audit">, principal: Principal, id: string, format: ExportFormat): Promise<Response> {
  const { db } = deps;
  const stored = visible(principal, findStoredSummary(db, principal, id), (s) => ownedBy(s.endUserId), notFound.summary(id));
  const summary = stored.record;
  if (summary.format !== "medical_note")
    throw new ApiError(
      "validation_error",
      `format ${format} is for clinical notes (the clinical template); summary ${id} uses the ${summary.template} template.`,
      {
        param: "format",
      },
    );
  const { sections, completed_at } = summary;
  if (summary.status !== "completed" || !sections || !completed_at)
    throw new ApiError(
      "resource_conflict",
      summary.status === "completed"
        ? `Summary ${id} was made before summaries cited their evidence; request it again (POST /v1/summaries) to export it.`
        : `Summary ${id} is ${summary.status}; only a completed summary can be exported.`,
    );
  const recording = loadRecording(db, principal, summary.recording_id);
  const endUser = recording.end_user_id ? findEndUser(db, principal, recording.end_user_id) : null;
  const author = referenceIn(recording.metadata, "fhir_author") ?? {
    display: endUser ? (endUser.name ?? endUser.external_id ?? endUser.id) : "Unknown (drafted by Parley)",
  };
  const subject = referenceIn(recording.metadata, "fhir_subject");
  // Its end user's content disclosed, as by any read of the summary.
  await deps.audit.access(principal, "summary.read", [summary.id, summary.transcription_id, summary.recording_id], { endUsers: [stored.endUserId] });
  const pdf = await notePdf(
    {
      title: "Medical note",
      subtitle: `Recording ${recording.id}${recording.sha256 ? `, SHA-256 ${recording.sha256}` : ""}`,
      sections,
      unsupportedMark: UNSUPPORTED_MARK,
    },
    new Date(completed_at),
  );
  const bundle = fhirNoteBundle({ summary: { ...summary, sections, completed_at }, recording, subject, author, pdf });
  return new Response(JSON.stringify(bundle), { headers: downloadHeaders("application/fhir+json", `${summary.id}.fhir.json`) });
}
