import type { Engines } from "../../engines";
import { type DiarizationKind, type SpeakerCountHint, SingleSpeakerDiarizer, type SpeakerTurn } from "../../engines/diarizer";
import type { ExcludeWait } from "../../engines/turns";
import { meanSpeechProbability, type SpeechRegion } from "../../engines/vad";
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

/**
 * The start of the recording already transcribed (a live transcription's committed regions,
 * decision 173): its segments, in the recording's times, cover it up to `until`; only the
 * audio after that is transcribed again. `language` is what the transcriber reported for them.
 */
export type EarlierWork = { segments: Omit<Segment, "speaker">[]; until: number; language: string | null };

/** The speech regions after `from`, cut there, in seconds after it. */
function regionsAfter(regions: SpeechRegion[], from: number): SpeechRegion[] {
  return regions.flatMap((r) => (r.end > from ? [{ start: Math.max(r.start, from) - from, end: r.end - from }] : []));
}

/**
 * 16 kHz PCM -> VAD -> speech (or the whole file) -> transcriber -> confidence, diarizer -> segments with the recording's times.
 * With `earlier` work, only the audio after it is transcribed; the diarizer still hears it all.
 */
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
    earlier?: EarlierWork;
  },
): Promise<PipelineResult> {
  const duration = round(pcm.length / SAMPLE_RATE);
  if (duration < MIN_AUDIO_SECONDS) {
    throw new TranscriptionFailure("audio_too_short", `The audio lasts ${duration} s; at least ${MIN_AUDIO_SECONDS} s is needed.`, duration);
  }
  // One VAD pass: its regions plan what is decoded (the speech alone, or the whole file when
  // it is nearly all speech: decision 100), its probabilities score segment confidence.
  const speech = await engines.vad.analyse(pcm, options.signal);
  // Speakers and confidence are over the whole recording; only the speech after the earlier work is transcribed.
  const from = options.earlier?.until ?? 0;
  const tail = pcm.subarray(Math.round(from * SAMPLE_RATE));
  const plan = planSpeech(regionsAfter(speech.regions, from), tail.length / SAMPLE_RATE);
  const raw: Omit<Segment, "speaker">[] = [...(options.earlier?.segments ?? [])];
  if (plan.spans.length === 0 && raw.length === 0)
    throw new TranscriptionFailure("audio_quality_insufficient", "No speech was detected in the audio.", duration);

  let language = options.earlier?.language ?? null;
  let model: string | undefined;
  if (plan.spans.length > 0) {
    // The language it reports is the one it used, which may not be the one asked for (an
    // English-only model asked for de transcribes, and reports, en).
    const result = await engines.transcriber.transcribe(planAudio(plan, tail, SAMPLE_RATE), {
      language: options.language ?? undefined,
      vocabulary: options.vocabulary,
      signal: options.signal,
      excludeWait: options.excludeWait,
    });
    language = result.language;
    model = result.model;
    // Times in the audio sent, mapped back to the recording's own.
    const original = (t: number, edge: "start" | "end") => from + toOriginalTime(plan, t, edge);
    for (const s of result.segments) {
      const text = s.text.trim();
      if (!text) continue;
      const start = round(original(Math.max(0, s.start), "start"));
      const end = round(Math.max(start, original(s.end, "end")));
      // An engine without word probabilities leaves confidence to the VAD (decision 042).
      const confidence = round(Math.min(1, Math.max(0, s.confidence ?? meanSpeechProbability(speech, start, end))));
      const words = s.words && placeWords(s.words, { start, end, confidence }, original);
      raw.push({ start, end, text, confidence, ...(words?.length && { words }) });
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
    // Earlier work always has a language when it has segments; "und" (undetermined) cannot be reached.
    language: language ?? options.language ?? "und",
    text: segments.map((s) => s.text).join(" "),
    duration_seconds: duration,
    segments,
    speakers,
    speaker_turns: speakerTurns.map((t) => ({ speaker: t.speaker, start: round(t.start), end: round(t.end) })),
    // The engine that ran: Parakeet hands languages it does not cover to whisper (decision 183).
    model: model ?? engines.transcriber.model,
    diarization: diarizer.kind,
  };
}
