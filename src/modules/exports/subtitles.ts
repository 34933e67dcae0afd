import type { Segment } from "../transcriptions/schema";

/** 3725.5 s -> "01:02:05,500" (SRT) or "01:02:05.500" (VTT). */
function timestamp(seconds: number, separator: "," | "."): string {
  const ms = Math.round(seconds * 1000);
  const pad = (n: number, width = 2) => String(n).padStart(width, "0");
  return `${pad(Math.floor(ms / 3_600_000))}:${pad(Math.floor(ms / 60_000) % 60)}:${pad(Math.floor(ms / 1000) % 60)}${separator}${pad(ms % 1000, 3)}`;
}

const line = (s: Segment) => `${s.speaker ? `${s.speaker}: ` : ""}${s.text.trim()}`;

export function toSrt(segments: Segment[]): string {
  return segments.map((s, i) => `${i + 1}\n${timestamp(s.start, ",")} --> ${timestamp(s.end, ",")}\n${line(s)}\n`).join("\n");
}

export function toVtt(segments: Segment[]): string {
  return `WEBVTT\n\n${segments.map((s) => `${timestamp(s.start, ".")} --> ${timestamp(s.end, ".")}\n${line(s)}\n`).join("\n")}`;
}

/** One line per segment, with its start time and speaker: readable without a player. */
export function toText(segments: Segment[]): string {
  return segments.map((s) => `[${timestamp(s.start, ".")}] ${line(s)}`).join("\n") + (segments.length ? "\n" : "");
}
