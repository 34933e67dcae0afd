/** One stretch of recognised speech; times in seconds from the start of the audio. */
export type TranscribedSegment = { start: number; end: number; text: string; confidence: number };

export type TranscriptionResult = { language: string; segments: TranscribedSegment[] };

/** Speech to text (implementation over whisper.cpp: src/engines/whisper-transcriber.ts). */
export interface Transcriber {
  /** Model name as in models/manifest.json. */
  readonly model: string;
  /**
   * `language`: a code or regional tag (pt-BR counts as pt); absent means detect. The result's
   * language is what the model used, which may differ (an English-only model answers en).
   */
  transcribe(pcm16k: Float32Array, options: { language?: string; signal?: AbortSignal }): Promise<TranscriptionResult>;
}
