import type { Engines } from "../../engines";
import { type DiarizationKind, type SpeakerCountHint, SingleSpeakerDiarizer, type SpeakerTurn } from "../../engines/diarizer";
import type { ExcludeWait } from "../../engines/turns";
import { meanSpeechProbability } from "../../engines/vad";
import type { Segment, Speaker, TranscriptionFailureCode } from "./schema";
import { assignSpeakers, defaultLabel } from "./speaker-assignment";
import { planAudio, planSpeech, toOriginalTime } from "./speech-plan";
import { type KnownVoice, labelKnownVoices, speakerPrints } from "./voice-matching";
import { placeWords } from "./words";

export const SAMPLE_RATE = 16_000;
const MIN_AUDIO_SECONDS = 1;

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

const round = (x: number) => Math.round(x * 1000) / 1000;

/** 16 kHz PCM -> VAD -> speech (or the whole file) -> transcriber -> confidence, diarizer -> segments with the recording's times. */
export async function transcribePcm(
  engines: PipelineEngines,
  pcm: Float32Array,
  options: {
    language: string | null;
    vocabulary?: readonly string[];
    signal: AbortSignal;
    excludeWait?: ExcludeWait;
    speakers?: SpeakerCountHint;
    voices?: KnownVoice[];
  },
): Promise<PipelineResult> {
  const duration = round(pcm.length / SAMPLE_RATE);
  if (duration < MIN_AUDIO_SECONDS) {
    throw new TranscriptionFailure("audio_too_short", `The audio lasts ${duration} s; at least ${MIN_AUDIO_SECONDS} s is needed.`, duration);
  }
  // One VAD pass: its regions plan what is decoded (the speech alone, or the whole file when
  // it is nearly all speech: decision 100), its probabilities score segment confidence.
  const speech = await engines.vad.analyse(pcm, options.signal);
  const plan = planSpeech(speech.regions, duration);
  if (plan.spans.length === 0) throw new TranscriptionFailure("audio_quality_insufficient", "No speech was detected in the audio.", duration);

  // The language it reports is the one it used, which may not be the one asked for (an
  // English-only model asked for de transcribes, and reports, en).
  const result = await engines.transcriber.transcribe(planAudio(plan, pcm, SAMPLE_RATE), {
    language: options.language ?? undefined,
    vocabulary: options.vocabulary,
    signal: options.signal,
    excludeWait: options.excludeWait,
  });
  const raw: Omit<Segment, "speaker">[] = [];
  for (const s of result.segments) {
    const text = s.text.trim();
    if (!text) continue;
    // Times in the audio sent, mapped back to the recording's own.
    const start = round(toOriginalTime(plan, Math.max(0, s.start), "start"));
    const end = round(Math.max(start, toOriginalTime(plan, s.end, "end")));
    // An engine without word probabilities leaves confidence to the VAD (decision 042).
    const confidence = round(Math.min(1, Math.max(0, s.confidence ?? meanSpeechProbability(speech, start, end))));
    const words = s.words && placeWords(s.words, { start, end, confidence }, (t, edge) => toOriginalTime(plan, t, edge));
    raw.push({ start, end, text, confidence, ...(words?.length && { words }) });
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
    language: result.language,
    text: segments.map((s) => s.text).join(" "),
    duration_seconds: duration,
    segments,
    speakers,
    speaker_turns: speakerTurns.map((t) => ({ speaker: t.speaker, start: round(t.start), end: round(t.end) })),
    model: result.model ?? engines.transcriber.model,
    diarization: diarizer.kind,
  };
}
