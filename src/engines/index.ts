import type { Config } from "../config";
import type { Logger } from "../log";
import { transcriberFamily } from "../model-files/family";
import { installAdvice, modelDirectory, modelFilePath } from "../model-files/manifest";
import { configuredModelState, usable } from "../model-files/state";
import { RuntimeFiles } from "../runtime/files";
import type { AudioDecoder } from "./audio";
import type { Embedder } from "./embedder";
import { FfmpegAudioDecoder, findSystemFfmpeg } from "./ffmpeg-audio";
import { WasmAudioDecoder } from "./wasm-audio";
import { TransformersEmbedder } from "./transformers-embedder";
import type { Llm } from "./llm";
import type { Transcriber } from "./transcriber";
import type { Diarizer } from "./diarizer";
import { ClassicDiarizer } from "./classic-diarizer";
import { NeuralDiarizer } from "./neural-diarizer";
import { LlamaLlm } from "./llama-llm";
import { OpenAiCompatibleLlm } from "./openai-compatible-llm";
import { RemoteEmbedder } from "./remote-embedder";
import { RemoteTranscriber } from "./remote-transcriber";
import { Turns } from "./turns";
import { SileroVad, type VoiceActivityDetector } from "./vad";
import { WhisperTranscriber } from "./whisper-transcriber";
import { ParakeetTranscriber } from "./parakeet-transcriber";
import { runningCli } from "../runtime/cli-name";

/** The ML and media engines, chosen once from config and injected through Deps. Models load lazily, on first use. */
export type Engines = {
  audio: AudioDecoder;
  transcriber: Transcriber;
  /** The embedded LLM: Ask's llama_cpp provider, and summaries and redaction's pass unless they are remote (backgroundLlm). */
  llm: Llm;
  /** The remote LLM (Ask's openai_compatible provider, PARLEY_LLM=openai_compatible): null unless PARLEY_OPENAI_BASE_URL and PARLEY_OPENAI_MODEL are set. */
  remoteLlm: Llm | null;
  embedder: Embedder;
  vad: VoiceActivityDetector;
  diarizer: Diarizer;
};

/**
 * PARLEY_FFMPEG_PATH when set, else the system's ffmpeg when new enough, else the
 * WebAssembly decoders built in (decision 091): decoding never needs anything installed.
 */
export function chooseAudioDecoder(ffmpegPath?: string, path?: string): AudioDecoder {
  const ffmpeg = ffmpegPath ?? findSystemFfmpeg(path);
  return ffmpeg ? new FfmpegAudioDecoder(ffmpeg) : new WasmAudioDecoder();
}

/** The neural diarizer when both of its models are installed (the one rule of decision 120), else the classic one (decision 097). */
export function chooseDiarizer(config: Config, runtime?: RuntimeFiles): Diarizer {
  const { segmentation, speakerEmbedding } = config.models;
  if (![segmentation, speakerEmbedding].every((name) => usable(configuredModelState(config.modelsDir, name)))) return new ClassicDiarizer();
  const files = { segmentation: modelFilePath(config.modelsDir, segmentation), embedding: modelFilePath(config.modelsDir, speakerEmbedding) };
  return new NeuralDiarizer({ ...files, names: { segmentation, embedding: speakerEmbedding } }, runtime);
}

/**
 * The LLM that background work uses: summaries on PARLEY_LLM's engine; redaction's model pass
 * on the embedded one unless PARLEY_REDACTION_LLM=openai_compatible opts in, since it sends
 * the transcript's identifiers (decision 188). Config validation makes the remote one exist
 * whenever it is named.
 */
export function backgroundLlm(engines: Pick<Engines, "llm" | "remoteLlm">, config: Config, work: "summary" | "redaction"): Llm {
  const remote = work === "summary" ? config.engines.llm === "openai_compatible" : config.redactionLlm === "openai_compatible";
  return remote && engines.remoteLlm ? engines.remoteLlm : engines.llm;
}

/**
 * Model job slots: PARLEY_JOB_CONCURRENCY, raised to PARLEY_REMOTE_CONCURRENCY when a job
 * engine is remote, so that many calls can be in flight to a server that batches them. The
 * local engines still take the cores in turns (decision 110), so extra slots only queue there.
 */
export function modelJobSlots(config: Config): number {
  const remote = config.engines.transcriber !== null || config.engines.llm === "openai_compatible";
  return remote ? Math.max(config.jobConcurrency, config.engines.remote.concurrency) : config.jobConcurrency;
}

/**
 * The configured transcription model's engine, by its family (decision 181): whisper, or
 * Parakeet with the fallback whisper model for the languages Parakeet does not cover.
 */
export function chooseTranscriber(config: Config, runtime: RuntimeFiles, cores: Turns): Transcriber {
  const whisper = (model: string) => new WhisperTranscriber({ model, path: modelFilePath(config.modelsDir, model), gpu: config.gpu, runtime, cores });
  const name = config.models.whisper;
  if (transcriberFamily(config.modelsDir, name) === "whisper") return whisper(name);
  const fallback = config.models.parakeetFallback;
  return new ParakeetTranscriber({
    model: name,
    path: modelFilePath(config.modelsDir, name),
    gpu: config.gpu,
    runtime,
    cores,
    fallback: {
      transcriber: whisper(fallback),
      installed: () => usable(configuredModelState(config.modelsDir, fallback)),
      install: installAdvice(fallback, { cli: runningCli() }),
    },
  });
}

export function createEngines(config: Config, _log: Logger): Engines {
  const { baseUrl, apiKey, model, contextTokens, timeoutMs } = config.ask.openai;
  const { remote } = config.engines;
  // A compiled executable writes its native files out on first use (decision 090).
  const runtime = new RuntimeFiles(config.dataDir);
  // Background model calls take the cores one at a time, across engines (decision 110).
  const cores = new Turns();
  // Building a remote engine connects nowhere: its server is first asked at first use (or by parley doctor).
  return {
    audio: chooseAudioDecoder(config.ffmpegPath),
    transcriber: config.engines.transcriber ? new RemoteTranscriber(config.engines.transcriber, remote) : chooseTranscriber(config, runtime, cores),
    llm: new LlamaLlm({ model: config.models.llm, path: modelFilePath(config.modelsDir, config.models.llm), gpu: config.gpu, runtime, cores }),
    remoteLlm: baseUrl && model ? new OpenAiCompatibleLlm({ baseUrl, apiKey, model, contextTokens, timeoutMs, policy: remote }) : null,
    embedder: config.engines.embedder
      ? new RemoteEmbedder(config.engines.embedder, remote)
      : new TransformersEmbedder(modelDirectory(config.modelsDir, config.models.embedding), config.models.embedding, runtime),
    vad: new SileroVad(undefined, runtime),
    diarizer: chooseDiarizer(config, runtime),
  };
}
