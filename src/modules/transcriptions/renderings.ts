import type { Transcription } from "./schema";

/** The transcript formats GET /transcriptions/{id}/transcript renders. */
export const TRANSCRIPT_FORMATS = { srt: "application/x-subrip", vtt: "text/vtt", txt: "text/plain" } as const;
export type TranscriptFormat = keyof typeof TRANSCRIPT_FORMATS;

type Rendered = Pick<Transcription, "segments" | "speakers">;

/** hh:mm:ss plus milliseconds after `separator` (SRT a comma, WebVTT a dot). */
function timestamp(seconds: number, separator: string): string {
  const ms = Math.round(seconds * 1000);
  const pad = (n: number, width = 2) => String(n).padStart(width, "0");
  return `${pad(Math.floor(ms / 3_600_000))}:${pad(Math.floor(ms / 60_000) % 60)}:${pad(Math.floor(ms / 1000) % 60)}${separator}${pad(ms % 1000, 3)}`;
}

/** Each segment's speaker as people read it: the speakers list's label (a voice's name once known), else the id. */
function speakerNames(t: Rendered): (speaker: string) => string {
  const labels = new Map(t.speakers.map((s) => [s.id, s.label]));
  return (speaker) => labels.get(speaker) ?? speaker;
}

/** SubRip: numbered cues, each line led by its speaker. */
export function renderSrt(t: Rendered): string {
  const name = speakerNames(t);
  return t.segments.map((s, i) => `${i + 1}\n${timestamp(s.start, ",")} --> ${timestamp(s.end, ",")}\n${name(s.speaker)}: ${s.text}\n`).join("\n");
}

/** WebVTT: the speaker in a voice span (<v Name>), which players show and style. */
export function renderVtt(t: Rendered): string {
  const name = speakerNames(t);
  // A voice annotation ends at ">"; a name cannot carry one.
  const cues = t.segments.map(
    (s) => `${timestamp(s.start, ".")} --> ${timestamp(s.end, ".")}\n<v ${name(s.speaker).replace(/[<>]/g, "")}>${s.text.replace(/</g, "&lt;")}\n`,
  );
  return ["WEBVTT\n", ...cues].join("\n");
}

/** Plain text: one paragraph per turn, "[hh:mm:ss] Name: words". */
export function renderTxt(t: Rendered): string {
  const name = speakerNames(t);
  const paragraphs: { start: number; speaker: string; text: string[] }[] = [];
  for (const s of t.segments) {
    const last = paragraphs.at(-1);
    if (last && last.speaker === s.speaker) last.text.push(s.text);
    else paragraphs.push({ start: s.start, speaker: s.speaker, text: [s.text] });
  }
  return paragraphs.map((p) => `[${timestamp(p.start, "").slice(0, 8)}] ${name(p.speaker)}: ${p.text.join(" ")}\n`).join("\n");
}

export const RENDERERS: Record<TranscriptFormat, (t: Rendered) => string> = { srt: renderSrt, vtt: renderVtt, txt: renderTxt };
