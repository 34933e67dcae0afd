import type { Engines } from "../../engines";
import { type DiarizationKind, type SpeakerCountHint, SingleSpeakerDiarizer, type SpeakerTurn } from "../../engines/diarizer";
import { meanSpeechProbability, type SpeechRegion } from "../../engines/vad";
import type { Segment, Speaker, TranscriptionFailureCode } from "./schema";
import { assignSpeakers, defaultLabel } from "./speaker-assignment";
import { type KnownVoice, labelKnownVoices, speakerPrints } from "./voice-matching";

export const SAMPLE_RATE = 16_000;
/** Whisper's own window: cutting the audio at pauses into pieces no longer than this keeps words whole. */
const MAX_WINDOW_SECONDS = 30;
const MIN_AUDIO_SECONDS = 1;
/** Speech regions are widened by this much so a word's onset or tail is not clipped. */
const PAD_SECONDS = 0.2;

/** A transcription that cannot succeed, with its spec 6 failure code. */
export class TranscriptionFailure extends Error {
  constructor(
    readonly code: TranscriptionFailureCode,
    message: string,
    readonly durationSeconds: number | null = null,
  ) {
    super(message);
  }
}

export type PipelineEngines = Pick<Engines, "transcriber" | "vad" | "diarizer">;

export type PipelineResult = {
  language: string;
  text: string;
  duration_seconds: number;
  segments: Segment[];
  speakers: Speaker[];
  speaker_turns: SpeakerTurn[];
  model: string;
  diarization: DiarizationKind;
};

/**
 * Groups speech regions into windows of at most `maxSeconds`, cut in the pauses between
 * regions; silence between windows is never sent to the transcriber, and a region longer
 * than a window is cut into window-sized pieces.
 */
function planWindows(regions: SpeechRegion[], durationSeconds: number, maxSeconds = MAX_WINDOW_SECONDS): SpeechRegion[] {
  const windows: SpeechRegion[] = [];
  let current: SpeechRegion | null = null;
  for (const r of [...regions].sort((a, b) => a.start - b.start)) {
    const start = Math.max(0, r.start - PAD_SECONDS);
    const end = Math.min(durationSeconds, r.end + PAD_SECONDS);
    if (end <= start) continue;
    if (current && end - current.start <= maxSeconds) {
      current.end = Math.max(current.end, end);
      continue;
    }
    if (current) windows.push(current);
    current = { start: Math.max(start, windows.at(-1)?.end ?? 0), end };
    while (current.end - current.start > maxSeconds) {
      windows.push({ start: current.start, end: current.start + maxSeconds });
      current = { start: current.start + maxSeconds, end: current.end };
    }
  }
  if (current) windows.push(current);
  return windows;
}

const round = (x: number) => Math.round(x * 1000) / 1000;

/** 16 kHz PCM -> VAD -> windows -> transcriber -> confidence, diarizer -> segments with absolute times. */
export async function transcribePcm(
  engines: PipelineEngines,
  pcm: Float32Array,
  options: { language: string | null; signal: AbortSignal; excludeWait?: <W>(wait: Promise<W>) => Promise<W>; speakers?: SpeakerCountHint; voices?: KnownVoice[] },
): Promise<PipelineResult> {
  const duration = round(pcm.length / SAMPLE_RATE);
  if (duration < MIN_AUDIO_SECONDS) {
    throw new TranscriptionFailure("audio_too_short", `The audio lasts ${duration} s; at least ${MIN_AUDIO_SECONDS} s is needed.`, duration);
  }
  // One VAD pass: its regions plan the windows, its probabilities score segment confidence.
  const speech = await engines.vad.analyse(pcm, options.signal);
  const windows = planWindows(speech.regions, duration);
  if (windows.length === 0) throw new TranscriptionFailure("audio_quality_insufficient", "No speech was detected in the audio.", duration);

  // The language the engine reports for the first window holds for the rest (one recording,
  // one language) and is what is stored: it is the one it used, which may not be the one
  // asked for (an English-only model asked for de transcribes, and reports, en).
  let reported: string | null = null;
  const raw: Omit<Segment, "speaker">[] = [];
  for (const w of windows) {
    options.signal.throwIfAborted();
    const slice = pcm.subarray(Math.floor(w.start * SAMPLE_RATE), Math.ceil(w.end * SAMPLE_RATE));
    const result = await engines.transcriber.transcribe(slice, { language: reported ?? options.language ?? undefined, signal: options.signal, excludeWait: options.excludeWait });
    reported ??= result.language;
    for (const s of result.segments) {
      const text = s.text.trim();
      if (!text) continue;
      const start = round(Math.min(w.end, w.start + Math.max(0, s.start)));
      const end = round(Math.min(w.end, Math.max(start, w.start + s.end)));
      // An engine without word probabilities leaves confidence to the VAD (decision 042).
      const confidence = s.confidence ?? meanSpeechProbability(speech, start, end);
      raw.push({ start, end, text, confidence: round(Math.min(1, Math.max(0, confidence))) });
    }
  }
  if (raw.length === 0) throw new TranscriptionFailure("audio_quality_insufficient", "No words could be recognised in the detected speech.", duration);

  // A hint of at most one speaker leaves nothing to tell apart: no diarizer runs.
  const hint = options.speakers ?? {};
  const diarizer = hint.maxSpeakers === 1 ? new SingleSpeakerDiarizer() : engines.diarizer;
  const turns = await diarizer.diarize(pcm, speech.regions, hint, options.signal);
  const assigned = assignSpeakers(raw, turns);
  const speakerTurns = assigned.turns;
  let segments = assigned.segments;
  let speakers: Speaker[] = [...new Set(segments.map((s) => s.speaker))].map((id) => ({ id, label: defaultLabel(id) }));
  const printer = diarizer.voiceprints;
  if (printer && options.voices?.length) {
    ({ segments, speakers } = labelKnownVoices(printer, await speakerPrints(printer, pcm, speakerTurns), options.voices, { segments, speakers }));
  }
  return {
    language: reported ?? "unknown",
    text: segments.map((s) => s.text).join(" "),
    duration_seconds: duration,
    segments,
    speakers,
    speaker_turns: speakerTurns.map((t) => ({ speaker: t.speaker, start: round(t.start), end: round(t.end) })),
    model: engines.transcriber.model,
    diarization: diarizer.kind,
  };
}
