// `parley eval speakers DIR`: the installed diarizer scored on an operator's own labelled
// recordings (issue 26), so a clinic knows the numbers on its own voices before it trusts
// them. Each audio file in DIR is paired with the RTTM file of the same name; the output
// is each file's DER (0.25 s collar), speakers found against true and turn changes found
// within 1 s, then the totals. Reads files only; no database, no server.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { extname, join } from "node:path";
import type { Config } from "../config";
import { type DiarizationScore, scoreDiarization } from "../engines/diarization-score";
import type { Diarizer, SpeakerCountHint } from "../engines/diarizer";
import { chooseAudioDecoder, chooseDiarizer } from "../engines";
import { parseRttm, RttmError } from "../engines/rttm";
import { SileroVad, type VoiceActivityDetector } from "../engines/vad";
import { RuntimeFiles } from "../runtime/files";
import { formatTable, parseFlags, UsageError } from "./args";

const AUDIO = new Set([".wav", ".flac", ".mp3", ".m4a", ".ogg", ".opus", ".webm", ".aac"]);

/** An audio file and its truth, or why it cannot be scored. */
export type EvalPair = { name: string; audio: string | null; rttm: string | null };

/** Audio files and RTTM files of DIR paired by their name without the extension. */
export function pairFiles(dir: string): EvalPair[] {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new UsageError(`parley eval speakers: ${dir} is not a directory`);
  const pairs = new Map<string, EvalPair>();
  for (const file of readdirSync(dir).sort()) {
    const ext = extname(file).toLowerCase();
    if (ext !== ".rttm" && !AUDIO.has(ext)) continue;
    const name = file.slice(0, -ext.length);
    const pair = pairs.get(name) ?? { name, audio: null, rttm: null };
    if (ext === ".rttm") pair.rttm = join(dir, file);
    else pair.audio = join(dir, file);
    pairs.set(name, pair);
  }
  if (pairs.size === 0) throw new UsageError(`parley eval speakers: no audio or .rttm files in ${dir}`);
  return [...pairs.values()];
}

export type EvalResult = { name: string; seconds: number; score: DiarizationScore } | { name: string; error: string };

/** Scores one pair: decode, VAD, diarize, compare with the RTTM. Errors of the pair are results, not throws. */
export async function evaluatePair(
  pair: EvalPair,
  engines: { decode: (path: string) => Promise<Float32Array>; vad: VoiceActivityDetector; diarizer: Diarizer },
  hint: SpeakerCountHint,
): Promise<EvalResult> {
  if (!pair.rttm) return { name: pair.name, error: `no ${pair.name}.rttm beside the audio` };
  if (!pair.audio) return { name: pair.name, error: `no audio file named ${pair.name} beside the RTTM` };
  let truth: ReturnType<typeof parseRttm>;
  try {
    truth = parseRttm(readFileSync(pair.rttm, "utf8"), pair.rttm);
  } catch (err) {
    if (err instanceof RttmError) return { name: pair.name, error: err.message };
    throw err;
  }
  let pcm: Float32Array;
  try {
    pcm = await engines.decode(pair.audio);
  } catch (err) {
    return { name: pair.name, error: (err as Error).message };
  }
  const { regions } = await engines.vad.analyse(pcm);
  const turns = await engines.diarizer.diarize(pcm, regions, hint);
  return { name: pair.name, seconds: pcm.length / 16_000, score: scoreDiarization(truth, turns) };
}

export type Scored = Extract<EvalResult, { score: DiarizationScore }>;
export const isScored = (r: EvalResult): r is Scored => "score" in r;
export const percent = (x: number) => `${(x * 100).toFixed(1)}%`;

/** Totals over scored files: DER weighted by duration, the share with the right count, turn changes found. */
export function summarise(scored: Scored[]) {
  const seconds = scored.reduce((s, r) => s + r.seconds, 0);
  return {
    files: scored.length,
    seconds,
    der: scored.reduce((s, r) => s + r.score.der * r.seconds, 0) / Math.max(1e-9, seconds),
    countRight: scored.filter((r) => r.score.foundSpeakers === r.score.trueSpeakers).length,
    changes: scored.reduce((s, r) => s + r.score.changes, 0),
    changesFound: scored.reduce((s, r) => s + r.score.changesFound, 0),
  };
}

/** One line of totals, as the CLI and the bench print them. */
export function summaryLine(scored: Scored[]): string {
  const t = summarise(scored);
  const recall = t.changes ? ` (${percent(t.changesFound / t.changes)})` : "";
  return `DER ${percent(t.der)}, speaker count right in ${t.countRight}/${t.files} (${percent(t.countRight / Math.max(1, t.files))}), turn changes found within 1 s ${t.changesFound}/${t.changes}${recall}`;
}

/** The table printed for people: one row per file, then the totals. */
export function report(results: EvalResult[], diarizer: string): string {
  const rows: string[][] = [["file", "DER", "speakers found/true", "turn changes found"]];
  for (const r of results) {
    if (isScored(r))
      rows.push([r.name, percent(r.score.der), `${r.score.foundSpeakers}/${r.score.trueSpeakers}`, `${r.score.changesFound}/${r.score.changes}`]);
    else rows.push([r.name, "error", r.error, ""]);
  }
  const scored = results.filter(isScored);
  const lines = [`diarizer: ${diarizer}`, formatTable(rows)];
  if (scored.length > 0) lines.push(`overall (${scored.length} files, ${(summarise(scored).seconds / 60).toFixed(1)} min): ${summaryLine(scored)}`);
  const failed = results.length - scored.length;
  if (failed > 0) lines.push(`${failed} file(s) could not be scored (see "error" above)`);
  return lines.join("\n");
}

function count(flag: string, value: string | undefined): number | null {
  if (value === undefined) return null;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 20) throw new UsageError(`parley eval speakers: ${flag} takes a whole number from 1 to 20`);
  return n;
}

/** `parley eval speakers DIR [--min-speakers N] [--max-speakers N]`; exits 1 when any file could not be scored. */
export async function evalCommand(config: Config, args: string[]): Promise<void> {
  const { values, positionals } = parseFlags(args, { "min-speakers": { type: "string" }, "max-speakers": { type: "string" } });
  const [what, dir, ...rest] = positionals;
  if (what !== "speakers" || !dir || rest.length > 0) throw new UsageError("usage: parley eval speakers DIR [--min-speakers N] [--max-speakers N]");
  const hint = { minSpeakers: count("--min-speakers", values["min-speakers"]), maxSpeakers: count("--max-speakers", values["max-speakers"]) };
  const pairs = pairFiles(dir);
  const runtime = new RuntimeFiles(config.dataDir);
  const audio = chooseAudioDecoder(config.ffmpegPath);
  const diarizer = chooseDiarizer(config, runtime);
  const engines = { decode: (path: string) => audio.decodePcm16k(path), vad: new SileroVad(undefined, runtime), diarizer };
  const results: EvalResult[] = [];
  for (const pair of pairs) results.push(await evaluatePair(pair, engines, hint));
  console.log(report(results, `${diarizer.kind} (${diarizer.model})`));
  if (!results.every(isScored)) process.exitCode = 1;
}
