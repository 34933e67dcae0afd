import { join } from "node:path";
import type { Config } from "../config";
import type { Logger } from "../log";
import type { AudioDecoder } from "./audio";
import type { Embedder } from "./embedder";
import { FfmpegAudioDecoder, findFfmpeg } from "./ffmpeg-audio";
import { TransformersEmbedder } from "./transformers-embedder";
import type { Llm } from "./llm";
import type { Transcriber } from "./transcriber";

/** The ML and media engines, chosen once from config and injected through Deps. Models load lazily, on first use. */
export type Engines = {
  audio: AudioDecoder;
  transcriber: Transcriber;
  llm: Llm;
  embedder: Embedder;
};

// SESSION SCAFFOLD: each engine's owner replaces its `notYetBuilt` entry with the real factory.
function notYetBuilt<T extends object>(kind: string): T {
  return new Proxy({} as T, {
    get: (_t, prop) => (prop === "then" ? undefined : () => Promise.reject(new Error(`the ${kind} engine is not built yet`))),
  });
}

export function createEngines(config: Config, _log: Logger): Engines {
  return {
    audio: new FfmpegAudioDecoder(findFfmpeg(config.ffmpegPath)),
    transcriber: notYetBuilt<Transcriber>("transcriber"),
    llm: notYetBuilt<Llm>("llm"),
    embedder: new TransformersEmbedder(join(config.modelsDir, config.models.embedding), config.models.embedding),
  };
}
