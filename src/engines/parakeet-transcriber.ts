import { existsSync } from "node:fs";
import { availableParallelism } from "node:os";
import type { RuntimeFiles } from "../runtime/files";
import { type GpuSetting, gpuCandidates } from "./gpu";
import { MissingModelError } from "./missing-model";
import { ParakeetLanguageError, UNDETERMINED_LANGUAGE, parakeetLanguage } from "./parakeet-languages";
import { type ParakeetToken, segmentsFromTokens } from "./parakeet-words";
import type { TranscribeOptions, Transcriber, TranscriptionResult } from "./transcriber";
import { Turns } from "./turns";
import { locateNativeWhisper, requireNativeWhisper } from "./whisper-native";
import { settledOrAborted } from "./whisper-transcriber";

type ParakeetContext = { readonly __parakeetContext: unique symbol };
type ParakeetJob = { promise: Promise<ParakeetToken[]>; stop: () => void };
/** The Parakeet half of Parley's whisper addon (native/whisper/parakeet.c). */
type ParakeetAddon = {
  parakeetLoad?: (path: string, gpu: boolean) => Promise<ParakeetContext>;
  parakeetTranscribe?: (context: ParakeetContext, pcm16k: Float32Array, options: { threads: number }) => ParakeetJob;
  /** The GPU parakeet.cpp takes when asked to; null from a CPU build (all but `build:whisper -- --cuda`). */
  parakeetGpuDevice?: () => string | null;
};

/** The whisper model that takes recordings in languages Parakeet does not cover, when it is installed (decision 183). */
export type WhisperFallback = { transcriber: Transcriber; installed: () => boolean; install: string };

export type ParakeetOptions = {
  /** Model name as in models/manifest.json (reported on transcriptions). */
  model: string;
  /** The ggml file; checked at first use, so a server starts without models installed. */
  path: string;
  threads?: number;
  /** PARLEY_GPU: Parakeet asks for the GPU when whisper would try one; only a CUDA build of the addon has one (decision 199). */
  gpu?: GpuSetting;
  /** A compiled executable's native files (decision 090); absent from a checkout. */
  runtime?: RuntimeFiles;
  /** The turns background model calls share (decision 110); its own when absent. */
  cores?: Turns;
  fallback?: WhisperFallback;
};

/** Parakeet runs only in Parley's own addon: no prebuilt build carries it. */
export class ParakeetUnavailableError extends Error {}

/**
 * Speech to text on NVIDIA's Parakeet TDT, through whisper.cpp's ggml implementation compiled
 * into Parley's addon (decision 181). The whole recording is one encoder pass and one greedy
 * TDT decode; the token durations give word times (src/engines/parakeet-words.ts). A
 * recording asked in a language Parakeet does not cover goes to the whisper fallback when it
 * is installed, and the result names the model that ran.
 */
export class ParakeetTranscriber implements Transcriber {
  readonly model: string;
  private loaded: Promise<{ addon: Required<Omit<ParakeetAddon, "parakeetGpuDevice">>; context: ParakeetContext; device: string | null }> | null = null;
  private readonly cores: Turns;

  constructor(private readonly options: ParakeetOptions) {
    this.model = options.model;
    this.cores = options.cores ?? new Turns();
  }

  /** Loads the model (for `parley doctor`): where Parley's own addon runs it. */
  async backend(): Promise<"cpu-native" | `gpu-native (${string})`> {
    const { device } = await this.load();
    return device ? `gpu-native (${device})` : "cpu-native";
  }

  private load() {
    this.loaded ??= this.open().catch((err) => {
      this.loaded = null; // a model installed or an addon built later is picked up by the next job
      throw err;
    });
    return this.loaded;
  }

  private async open() {
    const { path, runtime } = this.options;
    if (!existsSync(path)) throw new MissingModelError(this.model, "Parakeet", path);
    const location = locateNativeWhisper(runtime);
    if (!location.usable) throw new ParakeetUnavailableError(`Parakeet runs on Parley's native whisper addon, which is not usable here: ${location.reason}`);
    const addon = requireNativeWhisper<ParakeetAddon>(location);
    if (!addon.parakeetLoad || !addon.parakeetTranscribe)
      throw new ParakeetUnavailableError("Parley's native whisper addon was built without Parakeet (npm run build:whisper)");
    const full = addon as Required<Omit<ParakeetAddon, "parakeetGpuDevice">>;
    const gpu = gpuCandidates(this.options.gpu ?? "off").length > 0;
    // An addon built before decision 199 has no GPU parameter and no device: it runs on the CPU.
    const device = gpu ? (addon.parakeetGpuDevice?.() ?? null) : null;
    return { addon: full, context: await full.parakeetLoad(path, gpu), device };
  }

  transcribe(pcm16k: Float32Array, options: TranscribeOptions): Promise<TranscriptionResult> {
    const asked = options.language;
    if (asked && !parakeetLanguage(asked)) {
      const { fallback } = this.options;
      if (fallback?.installed()) return fallback.transcriber.transcribe(pcm16k, options).then((r) => ({ ...r, model: r.model ?? fallback.transcriber.model }));
      throw new ParakeetLanguageError(asked, {
        model: fallback?.transcriber.model ?? "a multilingual whisper model",
        install: fallback?.install ?? "PARLEY_PARAKEET_FALLBACK_MODEL",
      });
    }
    return this.cores.take(() => this.run(pcm16k, options), options.excludeWait);
  }

  private async run(pcm16k: Float32Array, options: Omit<TranscribeOptions, "excludeWait">): Promise<TranscriptionResult> {
    const { signal } = options;
    signal?.throwIfAborted();
    const { addon, context } = await this.load();
    const job = addon.parakeetTranscribe(context, pcm16k, { threads: this.options.threads ?? Math.min(8, availableParallelism()) });
    try {
      const tokens = await settledOrAborted(job, signal);
      signal?.throwIfAborted();
      const language = options.language ? parakeetLanguage(options.language)! : UNDETERMINED_LANGUAGE;
      return { language, segments: segmentsFromTokens(tokens, pcm16k.length / 16_000), model: this.model };
    } catch (err) {
      signal?.throwIfAborted(); // a stopped job rejects with the addon's error; the caller wants the abort reason
      throw err;
    }
  }
}
