// Spoken test conversations for the diarizer's tests and bench (decision 097): espeak-ng
// speaks each turn in its voice, the turns are joined with pauses, and the truth (who spoke
// from when to when) comes from where each turn's samples are not silent. Cached under the
// OS temp folder keyed by the conversation, so the suite synthesises each one once.
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { concatSamples } from "../../src/engines/pcm-spans";

/** An espeak-ng voice with its pitch (0-99) and rate (words a minute). */
export type EspeakVoice = { voice: string; pitch: number; rate: number };

/** Clearly different voices: a low male, a high female, and a male of another synthesiser (Klatt) in between. */
export const VOICES: readonly EspeakVoice[] = [
  { voice: "en-us", pitch: 35, rate: 150 },
  { voice: "en-us+f3", pitch: 75, rate: 185 },
  { voice: "en-us+klatt", pitch: 45, rate: 140 },
];

export type Turn = { speaker: number; text: string };
export type TruthTurn = { speaker: number; start: number; end: number };
export type Conversation = { pcm: Float32Array; turns: TruthTurn[] };

const RATE = 16_000;
const ESPEAK_RATE = 22_050;
/** Silence between turns: shorter than the VAD's redemption, so turns meet inside one speech region. */
export const PAUSE_SECONDS = 0.4;

/** Lines for test conversations: everyday sentences of a few seconds each. */
export const LINES = [
  "Good morning. What brings you in today?",
  "I have had a dry cough for about two weeks, and it gets worse at night.",
  "Any fever, or shortness of breath when you climb the stairs?",
  "A mild fever last weekend, but I feel tired all the time.",
  "Are you taking any medication at the moment?",
  "Only ibuprofen for the fever, and my usual allergy tablet in the morning.",
  "All right. We will order a chest x-ray to be safe.",
  "Thank you. Should I come back after the results arrive?",
  "Yes, book a visit for next week at the front desk.",
  "The upload fix is merged, and the battery report is still being tested.",
  "Any blockers on the older devices?",
  "The test phone with the old firmware is missing from the lab.",
];

/** Turns taking the lines in order, the speakers in `order`. */
export function script(order: number[]): Turn[] {
  return order.map((speaker, i) => ({ speaker, text: LINES[i % LINES.length]! }));
}

/** The samples of a 16-bit mono WAV file (espeak-ng's output). */
function wavSamples(bytes: Uint8Array): Float32Array {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let offset = 12;
  while (offset + 8 <= bytes.length) {
    const id = String.fromCharCode(...bytes.subarray(offset, offset + 4));
    const size = view.getUint32(offset + 4, true);
    // Writing to a pipe, espeak-ng cannot go back to fill in the size: bound it by the bytes.
    if (id === "data") {
      const count = Math.floor(Math.min(size, bytes.length - offset - 8) / 2);
      return Float32Array.from({ length: count }, (_, i) => view.getInt16(offset + 8 + 2 * i, true) / 32768);
    }
    offset += 8 + size + (size % 2);
  }
  throw new Error("espeak-ng wrote no WAV data");
}

/** 22.05 kHz to 16 kHz by windowed-sinc interpolation below the new Nyquist frequency. */
function resample(input: Float32Array): Float32Array {
  const ratio = ESPEAK_RATE / RATE;
  const cutoff = 0.9 / ratio;
  const taps = 16;
  const out = new Float32Array(Math.floor(input.length / ratio));
  for (let i = 0; i < out.length; i++) {
    const centre = i * ratio;
    let sum = 0;
    for (let k = Math.ceil(centre - taps); k <= Math.floor(centre + taps); k++) {
      if (k < 0 || k >= input.length) continue;
      const x = k - centre;
      const sinc = x === 0 ? 1 : Math.sin(Math.PI * cutoff * x) / (Math.PI * cutoff * x);
      const window = 0.5 + 0.5 * Math.cos((Math.PI * x) / taps);
      sum += input[k]! * cutoff * sinc * window;
    }
    out[i] = sum;
  }
  return out;
}

function speak(voice: EspeakVoice, text: string): Float32Array {
  const r = Bun.spawnSync(["espeak-ng", "-v", voice.voice, "-p", String(voice.pitch), "-s", String(voice.rate), "--stdout", text], { stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`espeak-ng failed: ${r.stderr.toString()}`);
  return resample(wavSamples(r.stdout));
}

/** First and last sample louder than a whisper, so the truth leaves out espeak-ng's own silence. */
function speechExtent(pcm: Float32Array): [number, number] {
  const loud = (x: number) => Math.abs(x) > 0.01;
  const first = pcm.findIndex(loud);
  const last = pcm.findLastIndex(loud);
  return first < 0 ? [0, 0] : [first, last + 1];
}

function synthesise(turns: Turn[], leadSeconds: number, voices: readonly EspeakVoice[]): Conversation {
  const pause = new Float32Array(Math.round(PAUSE_SECONDS * RATE));
  const parts: Float32Array[] = [new Float32Array(Math.round(leadSeconds * RATE))];
  const truth: TruthTurn[] = [];
  let at = parts[0]!.length;
  for (const turn of turns) {
    const spoken = speak(voices[turn.speaker]!, turn.text);
    const clip = spoken.subarray(...speechExtent(spoken));
    truth.push({ speaker: turn.speaker, start: at / RATE, end: (at + clip.length) / RATE });
    parts.push(clip, pause);
    at += clip.length + pause.length;
  }
  return { pcm: concatSamples(parts), turns: truth };
}

/** A conversation of `turns` (speakers index `voices`), 16 kHz mono, after `leadSeconds` of silence; synthesised once and cached. */
export function conversation(turns: Turn[], leadSeconds = 0.5, voices: readonly EspeakVoice[] = VOICES): Conversation {
  const key = createHash("sha256")
    .update(readFileSync(import.meta.path))
    .update(JSON.stringify({ turns, voices: turns.map((t) => voices[t.speaker]), leadSeconds }))
    .digest("hex")
    .slice(0, 16);
  const dir = join(tmpdir(), "parley-test-speech");
  const pcmPath = join(dir, `${key}.f32`);
  const truthPath = join(dir, `${key}.json`);
  if (existsSync(pcmPath) && existsSync(truthPath)) {
    const bytes = readFileSync(pcmPath);
    return {
      pcm: new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength)),
      turns: JSON.parse(readFileSync(truthPath, "utf8")),
    };
  }
  const made = synthesise(turns, leadSeconds, voices);
  mkdirSync(dir, { recursive: true });
  // Through temporary names, so parallel test files never read half a file.
  for (const [path, data] of [
    [pcmPath, new Uint8Array(made.pcm.buffer)],
    [truthPath, JSON.stringify(made.turns)],
  ] as const) {
    const tmp = `${path}.${process.pid}.tmp`;
    writeFileSync(tmp, data);
    renameSync(tmp, path);
  }
  return made;
}
