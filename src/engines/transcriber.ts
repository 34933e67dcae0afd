import type { ExcludeWait } from "./turns";

/**
 * One stretch of recognised speech; times in seconds from the start of the audio.
 * `confidence` (0-1) is null from an engine that cannot score its words: the pipeline then
 * scores the segment from its voice-activity pass (decision 042).
 */
export type TranscribedSegment = {
  start: number;
  end: number;
  text: string;
  confidence: number | null;
  /** Word timings (seconds from the start of the audio), from an engine that gives them; absent otherwise. */
  words?: TranscribedWord[];
};

/** One word as the engine heard it: Parakeet from its token durations, whisper from its token timestamps. */
export type TranscribedWord = { start: number; end: number; text: string; confidence: number | null };

/** `model`: the model that ran, where a transcriber hands some recordings to another (Parakeet to whisper, decision 183); the transcriber's own otherwise. */
export type TranscriptionResult = { language: string; segments: TranscribedSegment[]; model?: string };

export type TranscribeOptions = {
  /** A code or regional tag (pt-BR counts as pt); absent means detect. */
  language?: string;
  /** Terms to recognise (names, drugs, matters), most important first; the engine keeps what its prompt has room for. */
  vocabulary?: readonly string[];
  signal?: AbortSignal;
  /**
   * An engine that runs one call at a time passes its wait for earlier calls through this,
   * so a job's time limit leaves the wait out (see TimeLimit.excludeWait).
   */
  excludeWait?: ExcludeWait;
};

/** Speech to text (implementation over whisper.cpp: src/engines/whisper-transcriber.ts). */
export interface Transcriber {
  /** Model name as in models/manifest.json. */
  readonly model: string;
  /** The result's language is what the model used, which may differ from the one asked (an English-only model answers en). */
  transcribe(pcm16k: Float32Array, options: TranscribeOptions): Promise<TranscriptionResult>;
}
