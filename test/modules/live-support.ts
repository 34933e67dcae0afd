import { expect } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { SingleSpeakerDiarizer } from "../../src/engines/diarizer";
import type { Engines } from "../../src/engines";
import { ScriptedLlm } from "../../src/engines/llm.test-double";
import { ScriptedTranscriber } from "../../src/engines/transcriber.test-double";
import { findFfmpeg } from "../../src/engines/ffmpeg-audio";
import { makeTempDir, makeTenant, makeTestApp } from "../helpers";
import { concat, silence, voiced, wav } from "./pipeline-fixtures";

/** Below this RMS (20 ms frames) the test signals are silent: silence() is zeros (a lossy codec leaves some noise), voiced() never falls under ~0.08. */
const QUIET_RMS = 0.03;
/** Quiet this long parts two utterances (two padded regions joined leave some 0.3 s or more). */
const UTTERANCE_GAP_SECONDS = 0.2;

/** The voiced stretches of `pcm` (seconds), apart by UTTERANCE_GAP_SECONDS of quiet at least. */
export function voicedStretches(pcm: Float32Array): { start: number; end: number }[] {
  const frame = 320;
  const stretches: { start: number; end: number }[] = [];
  for (let at = 0; at < pcm.length; at += frame) {
    let sum = 0;
    const n = Math.min(frame, pcm.length - at);
    for (let i = at; i < at + n; i++) sum += pcm[i]! * pcm[i]!;
    if (Math.sqrt(sum / n) < QUIET_RMS) continue;
    const [start, end] = [at / 16_000, (at + n) / 16_000];
    const last = stretches.at(-1);
    if (last && start - last.end < UTTERANCE_GAP_SECONDS) last.end = end;
    else stretches.push({ start, end });
  }
  return stretches;
}

/**
 * TEST DOUBLE for the live tests: one segment per voiced stretch of the audio it is given,
 * "utterance N" for the Nth heard by this transcriber, so a test reads which utterances were
 * transcribed, where, and in which order, however the calls joined them.
 */
export function utteranceTranscriber() {
  let heard = 0;
  return new ScriptedTranscriber({
    segments: (pcm) => voicedStretches(pcm).map((s) => ({ ...s, text: ` utterance ${++heard}`, confidence: 0.9 })),
  });
}

/**
 * Real ffmpeg and Silero VAD; the transcriber says which utterances it was given. `env` (a
 * PARLEY_DATA_DIR) opens another app on an existing one's database and audio, as a restart does.
 */
export async function liveApp(engines: Partial<Engines> = {}, env: Record<string, string> = {}) {
  const t = await makeTestApp({
    engines: { transcriber: utteranceTranscriber(), llm: new ScriptedLlm(), diarizer: new SingleSpeakerDiarizer(), ...engines },
    env,
  });
  const tenant = makeTenant(t.deps);
  return { t, tenant };
}

export type T = Awaited<ReturnType<typeof liveApp>>["t"];

/** Three utterances of 2 s, 1.5 s of silence after each: every one is closed by silence. */
export const speech = wav(concat(voiced(2), silence(1.5), voiced(2), silence(1.5), voiced(2), silence(1.5)));
/** Byte ranges cutting the WAV mid-sample and mid-utterance: chunk 0 ends inside the second utterance. */
export const parts = [speech.slice(0, 100_000), speech.slice(100_000, 190_000), speech.slice(190_000)];

export const liveSegments = (t: T, id: string) =>
  t.deps.db
    .query<{ seq: number; start: number; end: number; text: string }, [string]>(
      'SELECT seq, start, "end", text FROM live_segments WHERE transcription_id = ? ORDER BY seq',
    )
    .all(id);

export const transcriptionOf = async (t: T, key: string, rec: string) => (await t.call("GET", `/v1/transcriptions?recording_id=${rec}`, { key })).body.data[0];

/** A transcriber that records the length (seconds) of the audio of each call, then answers as utteranceTranscriber. */
export function measuredTranscriber() {
  const inner = utteranceTranscriber();
  const seconds: number[] = [];
  return {
    seconds,
    transcriber: {
      model: inner.model,
      transcribe(pcm: Float32Array, options: Parameters<ScriptedTranscriber["transcribe"]>[1]) {
        seconds.push(pcm.length / 16_000);
        return inner.transcribe(pcm, options);
      },
    },
  };
}

/** A WAV encoded by ffmpeg into another container (`ext`), with ffmpeg's output `args`. */
export function encoded(wavBytes: Uint8Array, ext: string, args: string[]): Uint8Array<ArrayBuffer> {
  const dir = makeTempDir();
  writeFileSync(join(dir, "speech.wav"), wavBytes);
  const run = Bun.spawnSync([findFfmpeg(), "-v", "error", "-i", join(dir, "speech.wav"), ...args, join(dir, `speech.${ext}`)]);
  expect(run.exitCode).toBe(0);
  return new Uint8Array(readFileSync(join(dir, `speech.${ext}`)));
}

/**
 * The streamed containers decoded from a resume point (decision 202), as ffmpeg encodes them:
 * MP3 and AAC at 44.1 kHz, whose frames seldom start on a 16 kHz sample; AAC without its
 * noise substitution (random in the decoder), so its decodes compare sample for sample.
 */
export const COMPRESSED_STREAMS = [
  ["Ogg/Opus", "opus", ["-c:a", "libopus", "-b:a", "24k"]],
  ["WebM/Opus", "webm", ["-c:a", "libopus", "-b:a", "24k"]],
  ["MP3", "mp3", ["-ar", "44100", "-c:a", "libmp3lame", "-b:a", "64k"]],
  ["AAC in ADTS", "aac", ["-ar", "44100", "-c:a", "aac", "-aac_pns", "0", "-b:a", "64k", "-f", "adts"]],
] as const;
