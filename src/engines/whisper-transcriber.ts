import { existsSync } from "node:fs";
import type { RuntimeFiles } from "../runtime/files";
import { availableParallelism } from "node:os";
import { type GpuSetting, gpuCandidates } from "./gpu";
import { Turns } from "./turns";
import { MissingModelError } from "./missing-model";
import type { TranscribedSegment, TranscribeOptions, Transcriber, TranscriptionResult } from "./transcriber";
import { UnsupportedLanguageError, whisperLanguage } from "./whisper-languages";
import { byteCount, vocabularyPrompt } from "./whisper-prompt";
import { openNativeWhisper } from "./whisper-native";
import { openPrebuiltWhisper } from "./whisper-prebuilt";
import { DEFAULT_DECODING, type WhisperBackend, type WhisperDecoding, type WhisperJob, type WhisperOutput, type WhisperRunner } from "./whisper-runner";

export type WhisperOptions = {
  /** Model name as in models/manifest.json (reported on transcriptions). */
  model: string;
  /** The ggml file; checked at first use, so a server starts without models installed. */
  path: string;
  gpu: GpuSetting;
  threads?: number;
  decoding?: Partial<WhisperDecoding>;
  /** A compiled executable's native files (decision 090); absent from a checkout. */
  runtime?: RuntimeFiles;
  /** The turns background model calls share (decision 110); its own when absent. */
  cores?: Turns;
};

/**
 * The native job's result, or the signal's reason as soon as it aborts: a native call that
 * never settles (the binding can fail outside its promise) must not hold the caller, nor,
 * through the call chain, every later call. The job is told to stop; if it settles later
 * its outcome is dropped.
 */
export function settledOrAborted<T = WhisperOutput>(job: { stop: WhisperJob["stop"]; promise: Promise<T> }, signal?: AbortSignal): Promise<T> {
  if (!signal) return job.promise;
  return new Promise<T>((resolve, reject) => {
    const abort = () => {
      Promise.resolve(job.stop()).catch(() => {});
      reject(signal.reason);
    };
    if (signal.aborted) return abort();
    signal.addEventListener("abort", abort, { once: true });
    job.promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", abort));
  });
}

/**
 * Speech to text on whisper.cpp. The model loads once, on the first transcription, in the
 * best build there is: a GPU build of @fugood/whisper.node when PARLEY_GPU allows and its
 * drivers load, else Parley's addon compiled for this CPU, else the portable prebuilt CPU
 * build (decision 046). Every call is background work: it takes its turn on the cores shared
 * with the other local engines, which also serialises the calls one whisper context needs.
 */
export class WhisperTranscriber implements Transcriber {
  readonly model: string;
  private loaded: Promise<WhisperRunner> | null = null;
  private readonly cores: Turns;

  constructor(private readonly options: WhisperOptions) {
    this.model = options.model;
    this.cores = options.cores ?? new Turns();
  }

  /** Which build runs the model, or null before the first load; for `parley doctor`. */
  async backend(): Promise<WhisperBackend | null> {
    return this.loaded ? ((await this.loaded.catch(() => null))?.backend ?? null) : null;
  }

  load(): Promise<WhisperRunner> {
    this.loaded ??= this.open().catch((err) => {
      this.loaded = null; // a model installed later is picked up by the next job
      throw err;
    });
    return this.loaded;
  }

  private async open(): Promise<WhisperRunner> {
    const { path } = this.options;
    if (!existsSync(path)) throw new MissingModelError(this.model, "whisper", path);
    for (const backend of gpuCandidates(this.options.gpu)) {
      try {
        return await openPrebuiltWhisper(backend, path, this.options.runtime);
      } catch {
        // No driver libraries for this build: the next candidate, finally a CPU build.
      }
    }
    const { runtime } = this.options;
    return (await openNativeWhisper(path, runtime)) ?? (await openPrebuiltWhisper("cpu", path, runtime));
  }

  transcribe(pcm16k: Float32Array, options: TranscribeOptions): Promise<TranscriptionResult> {
    return this.cores.take(() => this.run(pcm16k, options), options.excludeWait);
  }

  private async run(pcm16k: Float32Array, options: Omit<TranscribeOptions, "excludeWait">): Promise<TranscriptionResult> {
    options.signal?.throwIfAborted();
    // "auto" detects; an English-only model (*.en) always answers "en".
    const language = options.language ? whisperLanguage(options.language) : "auto";
    if (!language) throw new UnsupportedLanguageError(options.language!);
    const runner = await this.load();
    const prompt = vocabularyPrompt(options.vocabulary ?? [], runner.countTokens ?? byteCount);
    const params = { language, prompt, threads: this.options.threads ?? Math.min(8, availableParallelism()), ...DEFAULT_DECODING, ...this.options.decoding };
    try {
      const result = await settledOrAborted(runner.transcribe(pcm16k, params), options.signal);
      options.signal?.throwIfAborted();
      // Whisper decodes a padded 30 s window, so its timestamps can run past the audio: clamp them.
      const seconds = pcm16k.length / 16_000;
      const span = (t0: number, t1: number) => {
        const start = Math.min(seconds, t0 / 1000);
        return { start, end: Math.min(seconds, Math.max(start, t1 / 1000)) };
      };
      // A build without word probabilities leaves confidence to the pipeline (decision 042).
      const segments: TranscribedSegment[] = result.segments.map((s) => ({
        ...span(s.t0, s.t1),
        text: s.text,
        confidence: s.p,
        ...(s.words && { words: s.words.map((w) => ({ ...span(w.t0, w.t1), text: w.text, confidence: w.p })) }),
      }));
      return { language: result.language || (language === "auto" ? "en" : language), segments };
    } catch (err) {
      // A build rejects a stopped job with its own error; the caller wants the abort reason.
      options.signal?.throwIfAborted();
      throw err;
    }
  }
}
