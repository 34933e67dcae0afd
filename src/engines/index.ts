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
import { Turns } from "./turns";
import { SileroVad, type VoiceActivityDetector } from "./vad";
import { WhisperTranscriber } from "./whisper-transcriber";
import { ParakeetTranscriber } from "./parakeet-transcriber";
import { runningCli } from "../runtime/cli-name";

/** The ML and media engines, chosen once from config and injected through Deps. Models load lazily, on first use. */
export type Engines = {
  audio: AudioDecoder;
  transcriber: Transcriber;
  llm: Llm;
  /** Ask's openai_compatible provider: null unless PARLEY_OPENAI_BASE_URL and PARLEY_OPENAI_MODEL are set. */
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
  // A compiled executable writes its native files out on first use (decision 090).
  const runtime = new RuntimeFiles(config.dataDir);
  // Background model calls take the cores one at a time, across engines (decision 110).
  const cores = new Turns();
  return {
    audio: chooseAudioDecoder(config.ffmpegPath),
    transcriber: chooseTranscriber(config, runtime, cores),
    llm: new LlamaLlm({ model: config.models.llm, path: modelFilePath(config.modelsDir, config.models.llm), gpu: config.gpu, runtime, cores }),
    // Building it connects nowhere: the server is first asked at the first question.
    remoteLlm: baseUrl && model ? new OpenAiCompatibleLlm({ baseUrl, apiKey, model, contextTokens, timeoutMs }) : null,
    embedder: new TransformersEmbedder(modelDirectory(config.modelsDir, config.models.embedding), config.models.embedding, runtime),
    vad: new SileroVad(undefined, runtime),
    diarizer: chooseDiarizer(config, runtime),
  };
}
