import type { TranscribedSegment, TranscribeOptions, TranscriptionResult, Transcriber } from "./transcriber";

export type TranscriberScript = {
  language?: string;
  /** The segments for one call, in seconds of the slice given; default one segment over the slice. */
  segments?: (pcm16k: Float32Array, call: number) => TranscribedSegment[];
  /** Thrown by every call (engine failure, missing model). */
  error?: Error;
  /** Never answers; rejects only when the signal aborts (time-limit tests). */
  hang?: boolean;
};

/**
 * TEST DOUBLE: a deterministic transcriber for pipeline tests, where even a generated
 * whisper model gives random text. By default each call returns one segment spanning
 * the audio it was given, "utterance N", so tests can see how audio was windowed.
 */
export class ScriptedTranscriber implements Transcriber {
  readonly model = "test-scripted-transcriber";
  private calls = 0;

  constructor(private readonly script: TranscriberScript = {}) {}

  async transcribe(pcm16k: Float32Array, options: TranscribeOptions): Promise<TranscriptionResult> {
    const call = ++this.calls;
    if (this.script.error) throw this.script.error;
    if (this.script.hang) {
      return new Promise((_, reject) => options.signal?.addEventListener("abort", () => reject(options.signal?.reason), { once: true }));
    }
    const seconds = pcm16k.length / 16_000;
    const segments = this.script.segments?.(pcm16k, call) ?? [{ start: 0, end: seconds, text: ` utterance ${call}`, confidence: 0.9 }];
    return { language: options.language ?? this.script.language ?? "en", segments };
  }
}
