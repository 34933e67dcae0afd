import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { availableParallelism } from "node:os";
import type { WhisperContext } from "@fugood/whisper.node";
import { type GpuBackend, type GpuSetting, gpuCandidates } from "./gpu";
import { MissingModelError } from "./missing-model";
import type { TranscribedSegment, TranscribeOptions, Transcriber, TranscriptionResult } from "./transcriber";
import { UnsupportedLanguageError, whisperLanguage } from "./whisper-languages";

export type WhisperOptions = {
  /** Model name as in models/manifest.json (reported on transcriptions). */
  model: string;
  /** The ggml file; checked at first use, so a server starts without models installed. */
  path: string;
  gpu: GpuSetting;
  threads?: number;
  decoding?: Partial<WhisperDecoding>;
};

/**
 * How whisper.cpp decodes. The binding always decodes greedily (no beam search); when it
 * samples it keeps the best of `bestOf`, and a decode failing whisper.cpp's entropy or
 * log-probability checks is retried `temperatureInc` hotter (0 turns fallback off). These
 * are whisper.cpp's own defaults, spelled out so the bench gives its CLI exactly the same.
 */
export type WhisperDecoding = { bestOf: number; temperature: number; temperatureInc: number };
export const DEFAULT_DECODING: WhisperDecoding = { bestOf: 5, temperature: 0, temperatureInc: 0.2 };

type WhisperModule = { WhisperContext: WhisperContext };
type Loaded = { context: WhisperContext; backend: GpuBackend | "cpu"; addon: WhisperModule };

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

const quietCalls = new Map<WhisperModule, number>();

/**
 * Runs `fn` with whisper.cpp's log silenced: it prints reports on stderr unless given a log
 * callback, and the server logs JSON lines only. The callback is a thread-safe function that
 * keeps the event loop alive, so it is set only while native calls run (counted across
 * engines): a CLI command or bench that used Whisper can then exit.
 */
async function quietly<T>(addon: WhisperModule, fn: () => T | Promise<T>): Promise<T> {
  const calls = quietCalls.get(addon) ?? 0;
  quietCalls.set(addon, calls + 1);
  if (calls === 0) addon.WhisperContext.toggleNativeLog(true, () => {});
  try {
    return await fn();
  } finally {
    const left = (quietCalls.get(addon) ?? 1) - 1;
    quietCalls.set(addon, left);
    if (left === 0) addon.WhisperContext.toggleNativeLog(false);
  }
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
        return { context: await quietly(addon, () => new addon.WhisperContext({ filePath: this.options.path, useGpu: true })), backend, addon };
      } catch {
        // No driver libraries for this build: the next candidate, finally the CPU build.
      }
    }
    const addon = loadAddon("cpu");
    return { context: await quietly(addon, () => new addon.WhisperContext({ filePath: this.options.path, useGpu: false })), backend: "cpu", addon };
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
    const { context, addon } = await this.load();
    const pcm16 = toPcm16(pcm16k);
    const params = { language, maxThreads: this.options.threads ?? Math.min(8, availableParallelism()), ...DEFAULT_DECODING, ...this.options.decoding };
    try {
      const result = await quietly(addon, () => settledOrAborted(context.transcribeData(pcm16, params), options.signal));
      options.signal?.throwIfAborted();
      // Whisper decodes a padded 30 s window, so its timestamps can run past the audio: clamp them.
      const seconds = pcm16k.length / 16_000;
      // The binding gives no token probabilities: confidence is left to the pipeline (decision 042).
      const segments: TranscribedSegment[] = result.segments.map((s) => {
        const start = Math.min(seconds, s.t0 / 1000);
        return { start, end: Math.min(seconds, Math.max(start, s.t1 / 1000)), text: s.text, confidence: null };
      });
      return { language: result.language || (language === "auto" ? "en" : language), segments };
    } catch (err) {
      // The binding rejects a stopped job with its own error; the caller wants the abort reason.
      options.signal?.throwIfAborted();
      throw err;
    }
  }
}
