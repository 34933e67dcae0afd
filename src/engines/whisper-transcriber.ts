import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { availableParallelism } from "node:os";
import type { WhisperContext } from "@fugood/whisper.node";
import { type GpuBackend, type GpuSetting, gpuCandidates } from "./gpu";
import { MissingModelError } from "./missing-model";
import type { TranscribedSegment, TranscribeOptions, Transcriber, TranscriptionResult } from "./transcriber";
import type { SpeechProbabilities } from "./vad";
import { UnsupportedLanguageError, whisperLanguage } from "./whisper-languages";

export type WhisperOptions = {
  /** Model name as in models/manifest.json (reported on transcriptions). */
  model: string;
  /** The ggml file; checked at first use, so a server starts without models installed. */
  path: string;
  gpu: GpuSetting;
  threads?: number;
  /** Per-frame speech probability, the source of segment confidence (see decision 042). */
  vad?: SpeechProbabilities;
};

type WhisperModule = { WhisperContext: WhisperContext };
type Loaded = { context: WhisperContext; backend: GpuBackend | "cpu" };

const require = createRequire(import.meta.url);

/**
 * Loads one prebuilt whisper.cpp addon; a GPU build whose driver libraries are absent
 * fails here. Literal names on linux-x64 so `bun build --compile` can embed them.
 */
function loadAddon(backend: GpuBackend | "cpu"): WhisperModule {
  if (process.platform === "linux" && process.arch === "x64") {
    if (backend === "cuda") return require("@fugood/node-whisper-linux-x64-cuda");
    if (backend === "vulkan") return require("@fugood/node-whisper-linux-x64-vulkan");
    return require("@fugood/node-whisper-linux-x64");
  }
  return require(`@fugood/node-whisper-${process.platform}-${process.arch}${backend === "cpu" ? "" : `-${backend}`}`);
}

/** whisper.cpp prints its load report on stderr unless given a log callback; the server logs JSON lines only. */
function quiet(addon: WhisperModule) {
  addon.WhisperContext.toggleNativeLog(true, () => {});
}

/** Float samples in [-1, 1] to the 16-bit PCM the binding's transcribeData takes. */
function toPcm16(pcm: Float32Array): ArrayBuffer {
  const out = new Int16Array(pcm.length);
  for (let i = 0; i < pcm.length; i++) out[i] = Math.max(-32768, Math.min(32767, Math.round((pcm[i] ?? 0) * 32767)));
  return out.buffer;
}

type NativeJob<T> = { stop: () => Promise<void>; promise: Promise<T> };

/**
 * The native job's result, or the signal's reason as soon as it aborts: a native call that
 * never settles (the binding can fail outside its promise) must not hold the caller, nor,
 * through the call chain, every later call. The job is told to stop; if it settles later
 * its outcome is dropped.
 */
function settledOrAborted<T>(job: NativeJob<T>, signal?: AbortSignal): Promise<T> {
  if (!signal) return job.promise;
  return new Promise<T>((resolve, reject) => {
    const abort = () => {
      job.stop().catch(() => {});
      reject(signal.reason);
    };
    if (signal.aborted) return abort();
    signal.addEventListener("abort", abort, { once: true });
    job.promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", abort));
  });
}

/**
 * Speech to text on whisper.cpp through @fugood/whisper.node. The model loads once, on
 * the first transcription; calls are serialised because one whisper context decodes one
 * stream at a time.
 */
export class WhisperTranscriber implements Transcriber {
  readonly model: string;
  private loaded: Promise<Loaded> | null = null;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly options: WhisperOptions) {
    this.model = options.model;
  }

  /** Which build runs the model ("cpu", "cuda", "vulkan"), or null before the first load; for `parley doctor`. */
  async backend(): Promise<GpuBackend | "cpu" | null> {
    return this.loaded ? (await this.loaded.catch(() => null))?.backend ?? null : null;
  }

  load(): Promise<Loaded> {
    this.loaded ??= this.open().catch((err) => {
      this.loaded = null; // a model installed later is picked up by the next job
      throw err;
    });
    return this.loaded;
  }

  private async open(): Promise<Loaded> {
    if (!existsSync(this.options.path)) throw new MissingModelError(this.model, "whisper");
    for (const backend of gpuCandidates(this.options.gpu)) {
      try {
        const addon = loadAddon(backend);
        quiet(addon);
        return { context: new addon.WhisperContext({ filePath: this.options.path, useGpu: true }), backend };
      } catch {
        // No driver libraries for this build: the next candidate, finally the CPU build.
      }
    }
    const addon = loadAddon("cpu");
    quiet(addon);
    return { context: new addon.WhisperContext({ filePath: this.options.path, useGpu: false }), backend: "cpu" };
  }

  transcribe(pcm16k: Float32Array, options: TranscribeOptions): Promise<TranscriptionResult> {
    const turn = options.excludeWait ? options.excludeWait(this.queue) : this.queue;
    const run = turn.then(() => this.run(pcm16k, options));
    this.queue = run.catch(() => {});
    return run;
  }

  private async run(pcm16k: Float32Array, options: { language?: string; signal?: AbortSignal }): Promise<TranscriptionResult> {
    options.signal?.throwIfAborted();
    // "auto" detects; an English-only model (*.en) always answers "en".
    const language = options.language ? whisperLanguage(options.language) : "auto";
    if (!language) throw new UnsupportedLanguageError(options.language!);
    const { context } = await this.load();
    const job = context.transcribeData(toPcm16(pcm16k), {
      language,
      maxThreads: this.options.threads ?? Math.min(8, availableParallelism()),
    });
    try {
      const result = await settledOrAborted(job, options.signal);
      options.signal?.throwIfAborted();
      // Whisper decodes a padded 30 s window, so its timestamps can run past the audio: clamp them.
      const seconds = pcm16k.length / 16_000;
      const segments: TranscribedSegment[] = result.segments.map((s) => {
        const start = Math.min(seconds, s.t0 / 1000);
        return { start, end: Math.min(seconds, Math.max(start, s.t1 / 1000)), text: s.text, confidence: 0 };
      });
      await this.scoreConfidence(pcm16k, segments, options.signal);
      return { language: result.language || (language === "auto" ? "en" : language), segments };
    } catch (err) {
      // The binding rejects a stopped job with its own error; the caller wants the abort reason.
      options.signal?.throwIfAborted();
      throw err;
    }
  }

  /**
   * The binding exposes no token probabilities, so a segment's confidence is the mean
   * speech probability of the VAD frames it spans (decision 042); 0.5 without a VAD.
   */
  private async scoreConfidence(pcm16k: Float32Array, segments: TranscribedSegment[], signal?: AbortSignal) {
    if (!this.options.vad || segments.length === 0) {
      for (const s of segments) s.confidence = 0.5;
      return;
    }
    const { frameSeconds, probabilities } = await this.options.vad.frameProbabilities(pcm16k, signal);
    for (const s of segments) {
      const first = Math.floor(s.start / frameSeconds);
      const last = Math.max(first + 1, Math.ceil(s.end / frameSeconds));
      const span = probabilities.subarray(first, Math.min(probabilities.length, last));
      const mean = span.length ? span.reduce((a, b) => a + b, 0) / span.length : 0;
      s.confidence = Math.round(mean * 1000) / 1000;
    }
  }
}
