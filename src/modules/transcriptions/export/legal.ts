import type { Revision } from "../revisions-schema";
import type { Segment, Transcription } from "../schema";
import { clockTime } from "./inaudible";

/** Court-transcript pages: 25 numbered lines each (issue 25). */
export const LINES_PER_PAGE = 25;
/** Characters a line holds in the monospaced face: a SHA-256 (64 hex digits) fits on one. */
export const CHARS_PER_LINE = 66;

/** One numbered line: its words, and the time its segment starts, shown in the margin on its first line. */
export type LegalLine = { text: string; time?: string; bold?: boolean };
/** Pages of exactly LINES_PER_PAGE lines (blank ones padded in, numbered like the rest), as both the PDF and the DOCX lay them out. */
export type LegalDocument = { title: string; pages: LegalLine[][] };

/** What the caption and the certification state, beside the transcript at its revision. */
export type LegalSource = {
  transcription: Transcription;
  recording: { id: string; name: string | null; recorded_at: string | null; created_at: string; sha256: string | null; metadata: Record<string, unknown> };
  modelSha256: string | null;
  /** The revisions up to the one exported, oldest first. */
  revisions: Revision[];
};

/** `text` cut at spaces into lines of at most `width` characters (a longer word is cut where the line ends). */
export function wrap(text: string, width = CHARS_PER_LINE): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(/\s+/).filter(Boolean)) {
    let rest = word;
    while (rest) {
      if (!line && rest.length > width) {
        lines.push(rest.slice(0, width));
        rest = rest.slice(width);
      } else if (line && line.length + 1 + rest.length > width) {
        lines.push(line);
        line = "";
      } else {
        line = line ? `${line} ${rest}` : rest;
        rest = "";
      }
    }
  }
  if (line) lines.push(line);
  return lines.length ? lines : [""];
}

/** Names from metadata's `participants` (a list or a comma-separated string), else the transcript's speakers. */
function participants(source: LegalSource): string[] {
  const given = source.recording.metadata.participants;
  if (Array.isArray(given)) return given.map(String);
  if (typeof given === "string")
    return given
      .split(",")
      .map((p) => p.trim())
      .filter(Boolean);
  return source.transcription.speakers.map((s) => s.label);
}

function caption(source: LegalSource): LegalLine[] {
  const { recording, transcription } = source;
  const matter = recording.metadata.matter;
  const date = (recording.recorded_at ?? recording.created_at).slice(0, 10);
  return [
    { text: "VERBATIM TRANSCRIPT OF RECORDING", bold: true },
    { text: "" },
    ...wrap(`Matter: ${typeof matter === "string" && matter ? matter : "(not given)"}`).map((text) => ({ text })),
    { text: `Date: ${date}` },
    ...wrap(`Recording: ${recording.name ? `${recording.name} ` : ""}(${recording.id})`).map((text) => ({ text })),
    { text: "Participants:" },
    ...participants(source).flatMap((p) => wrap(p, CHARS_PER_LINE - 2).map((text) => ({ text: `  ${text}` }))),
    { text: `Language: ${transcription.language ?? "unknown"}` },
    { text: `Transcription: ${transcription.id}, revision ${transcription.revision}` },
  ];
}

/** The transcript: a turn opens with its speaker's name in capitals; each segment's start stands in the margin. */
function body(transcription: Transcription, text: (s: Segment) => string): LegalLine[] {
  const labels = new Map(transcription.speakers.map((s) => [s.id, s.label]));
  const lines: LegalLine[] = [];
  let speaker: string | null = null;
  for (const segment of transcription.segments) {
    const opens = segment.speaker !== speaker;
    speaker = segment.speaker;
    const name = (labels.get(segment.speaker) ?? segment.speaker).toUpperCase();
    const words = wrap(opens ? `${name}: ${text(segment)}` : text(segment));
    words.forEach((line, i) => lines.push({ text: line, ...(i === 0 ? { time: clockTime(segment.start) } : {}) }));
  }
  return lines;
}

const quoted = (s: string) => JSON.stringify(s);

function describeChange(change: Revision["changes"][number]): string {
  if ("speaker_id" in change) return `speaker ${change.speaker_id} renamed ${quoted(change.from)} to ${quoted(change.to)}`;
  return `segment ${change.segment} ${change.field} ${quoted(change.from)} to ${quoted(change.to)}`;
}

function certification(source: LegalSource, certifiedAt: string): LegalLine[] {
  const { recording, transcription } = source;
  const corrections = source.revisions.filter((r) => r.revision > 0);
  const lines: LegalLine[] = [{ text: "CERTIFICATION", bold: true }, { text: "" }];
  const para = (text: string, indent = "") => lines.push(...wrap(text, CHARS_PER_LINE - indent.length).map((t) => ({ text: indent + t })));
  para(`This transcript was made by machine from recording ${recording.id} and is revision ${transcription.revision} of transcription ${transcription.id}.`);
  lines.push({ text: "Recording SHA-256:" }, { text: recording.sha256 ?? "not recorded" });
  para(`Model: ${transcription.model ?? "unknown"}`);
  lines.push({ text: "Model SHA-256:" }, { text: source.modelSha256 ?? "not recorded" });
  lines.push({ text: `Revision: ${transcription.revision}` });
  if (corrections.length === 0) para("Corrections: none; the text is the machine's as it made it.");
  else lines.push({ text: "Corrections:" });
  for (const r of corrections) {
    const who = r.author?.email ?? `${r.author?.type ?? "unknown"} credential ${r.author?.id ?? ""}`.trim();
    const restores = r.restored_from === null ? "" : `, restoring revision ${r.restored_from}`;
    para(`Revision ${r.revision}, ${r.created_at}, by ${who}${restores}:`, "  ");
    for (const change of r.changes) para(describeChange(change), "    ");
  }
  lines.push({ text: "" });
  para(`Certified by Parley on ${certifiedAt}.`);
  return lines;
}

/** Lines cut into pages of LINES_PER_PAGE, the last one padded with blank numbered lines. */
function paginate(lines: LegalLine[]): LegalLine[][] {
  const pages: LegalLine[][] = [];
  for (let i = 0; i < lines.length; i += LINES_PER_PAGE) pages.push(lines.slice(i, i + LINES_PER_PAGE));
  const last = pages.at(-1) ?? [];
  while (last.length < LINES_PER_PAGE) last.push({ text: "" });
  if (pages.length === 0) pages.push(last);
  return pages;
}

/**
 * The verbatim legal transcript, laid out once for the PDF and the DOCX alike: the caption on
 * the first page, the transcript from the next, and the certification on pages of its own.
 */
export function layOutLegalTranscript(source: LegalSource, text: (s: Segment) => string, certifiedAt: string): LegalDocument {
  return {
    title: `Transcript of recording ${source.recording.id}`,
    pages: [...paginate(caption(source)), ...paginate(body(source.transcription, text)), ...paginate(certification(source, certifiedAt))],
  };
}
