import { createHash } from "node:crypto";
import type { Summary, SummarySection } from "./schema";

/** A FHIR R4 Reference: a literal one ("Patient/123") or, lacking it, only a name. */
export type FhirReference = { reference: string } | { display: string };

/** What a note's bundle is made of besides the summary: the recording's facts, who it is about and by, and the PDF. */
export type FhirNoteInput = {
  summary: Summary & { sections: SummarySection[]; completed_at: string };
  recording: { id: string; sha256: string | null; recorded_at: string | null };
  subject: FhirReference | null;
  author: FhirReference;
  pdf: Buffer;
};

const LOINC = "http://loinc.org";
/** The document's kind: a progress note (LOINC 11506-3), what a visit's SOAP note is charted as. */
const NOTE_TYPE = { coding: [{ system: LOINC, code: "11506-3", display: "Progress note" }], text: "Medical note" };
/** The SOAP sections' LOINC codes, by the clinical template's field names. */
const SECTION_CODES: Record<string, { code: string; display: string }> = {
  chief_complaint: { code: "10154-3", display: "Chief complaint Narrative - Reported" },
  subjective: { code: "61150-9", display: "Subjective Narrative" },
  objective: { code: "61149-1", display: "Objective Narrative" },
  assessment: { code: "51848-0", display: "Evaluation note" },
  plan: { code: "18776-5", display: "Plan of care note" },
};
/** How a statement without evidence reads in the chart: marked, as on the dashboard, for the clinician who signs. */
export const UNSUPPORTED_MARK = "[not supported by the recording]";
/** Identifier systems: Parley's own URNs (a FHIR system is any URI). */
const SYSTEMS = { summary: "urn:parley:summary", recording: "urn:parley:recording", sha256: "urn:parley:recording-sha256" };

/** A stable UUID from a name (the hash's first 16 bytes, version and variant bits set), so an export repeats exactly. */
function uuidOf(name: string): string {
  const b = createHash("sha256").update(name).digest();
  b[6] = (b[6]! & 0x0f) | 0x50;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const h = b.subarray(0, 16).toString("hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

const escapeXml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
const statementText = (item: { text: string; supported: boolean }) => (item.supported ? item.text : `${item.text} ${UNSUPPORTED_MARK}`);

/** A section's narrative: XHTML as FHIR requires, a list for bullets and a paragraph for prose. */
function narrative(section: SummarySection): { status: "generated"; div: string } {
  const texts = section.items.map((item) => escapeXml(statementText(item)));
  const body =
    texts.length === 0 ? "<p>(nothing recorded)</p>" : section.list ? `<ul>${texts.map((t) => `<li>${t}</li>`).join("")}</ul>` : `<p>${texts.join(" ")}</p>`;
  return { status: "generated", div: `<div xmlns="http://www.w3.org/1999/xhtml">${body}</div>` };
}

/** The note as plain text: each section's title, then its statements (bullets for lists). */
export function noteText(title: string, sections: SummarySection[]): string {
  const parts = [title];
  for (const s of sections) {
    const texts = s.items.map(statementText);
    parts.push(`${s.title}\n${texts.length === 0 ? "(nothing recorded)" : s.list ? texts.map((t) => `- ${t}`).join("\n") : texts.join(" ")}`);
  }
  return `${parts.join("\n\n")}\n`;
}

/**
 * A clinical summary as a FHIR R4 document Bundle: a Composition (first, as a document
 * bundle requires) with one section per SOAP field, and a DocumentReference carrying the
 * note as text/plain and as a PDF, identified by the recording's SHA-256. Status preliminary
 * on both: a machine draft a clinician still reviews and signs.
 */
export function fhirNoteBundle(input: FhirNoteInput): object {
  const { summary, recording, subject, author } = input;
  const title = "Medical note";
  const text = noteText(title, summary.sections);
  const date = summary.completed_at;
  const about = subject ? { subject } : {};
  const recordingIds = [{ system: SYSTEMS.recording, value: recording.id }, ...(recording.sha256 ? [{ system: SYSTEMS.sha256, value: recording.sha256 }] : [])];
  const composition = {
    resourceType: "Composition",
    identifier: { system: SYSTEMS.summary, value: summary.id },
    status: "preliminary",
    type: NOTE_TYPE,
    ...about,
    date,
    author: [author],
    title,
    ...(recording.recorded_at ? { event: [{ period: { start: recording.recorded_at } }] } : {}),
    section: summary.sections.map((s) => ({
      title: s.title,
      code: { coding: [{ system: LOINC, ...(SECTION_CODES[s.key] ?? { code: "34109-9", display: "Note" }) }], text: s.title },
      text: narrative(s),
    })),
  };
  const documentReference = {
    resourceType: "DocumentReference",
    identifier: recordingIds,
    status: "current",
    docStatus: "preliminary",
    type: NOTE_TYPE,
    ...about,
    date,
    author: [author],
    description: `${title} drafted by Parley from recording ${recording.id} (${summary.prompt_version}, ${summary.model ?? "unknown model"})`,
    content: [
      { attachment: { contentType: "text/plain; charset=utf-8", data: Buffer.from(text).toString("base64"), title: `${title}.txt`, creation: date } },
      { attachment: { contentType: "application/pdf", data: input.pdf.toString("base64"), title: `${title}.pdf`, creation: date } },
    ],
    ...(recording.recorded_at ? { context: { period: { start: recording.recorded_at } } } : {}),
  };
  return {
    resourceType: "Bundle",
    identifier: { system: SYSTEMS.summary, value: summary.id },
    type: "document",
    timestamp: date,
    entry: [
      { fullUrl: `urn:uuid:${uuidOf(`${summary.id}/Composition`)}`, resource: composition },
      { fullUrl: `urn:uuid:${uuidOf(`${summary.id}/DocumentReference`)}`, resource: documentReference },
    ],
  };
}
