/**
 * RTTM (NIST's Rich Transcription Time Marked format), the standard way diarization truth
 * is written: one `SPEAKER <file> <channel> <start> <duration> <NA> <NA> <name> <NA> <NA>`
 * line per turn, times in seconds. Read by `parley eval speakers`, written by the bench's
 * corpus generator.
 */
import type { LabelledTurn } from "./diarization-score";

/** A malformed RTTM file: the message names the line. */
export class RttmError extends Error {}

export function parseRttm(text: string, source = "RTTM"): { speaker: string; start: number; end: number }[] {
  const turns: { speaker: string; start: number; end: number }[] = [];
  text.split(/\r?\n/).forEach((line, i) => {
    const fields = line.trim().split(/\s+/);
    if (fields[0] === "" || fields[0]!.startsWith("#")) return;
    // Other record types (SPKR-INFO, LEXEME...) say nothing about who spoke when.
    if (fields[0] !== "SPEAKER") return;
    const where = `${source} line ${i + 1}`;
    if (fields.length < 8)
      throw new RttmError(`${where}: a SPEAKER line has 9 or 10 fields (type, file, channel, start, duration, NA, NA, speaker, ...), found ${fields.length}`);
    const start = Number(fields[3]);
    const duration = Number(fields[4]);
    if (!Number.isFinite(start) || start < 0) throw new RttmError(`${where}: start "${fields[3]}" is not a time in seconds`);
    if (!Number.isFinite(duration) || duration < 0) throw new RttmError(`${where}: duration "${fields[4]}" is not a time in seconds`);
    turns.push({ speaker: fields[7]!, start, end: start + duration });
  });
  if (turns.length === 0) throw new RttmError(`${source}: no SPEAKER lines`);
  return turns.sort((a, b) => a.start - b.start);
}

export function formatRttm(file: string, turns: LabelledTurn[]): string {
  return turns.map((t) => `SPEAKER ${file} 1 ${t.start.toFixed(3)} ${(t.end - t.start).toFixed(3)} <NA> <NA> ${t.speaker} <NA> <NA>\n`).join("");
}
