import type { GpuBackend } from "./gpu";

/**
 * How whisper.cpp decodes. Both builds decode greedily (no beam search); when sampling they
 * keep the best of `bestOf`, and a decode failing whisper.cpp's entropy or log-probability
 * checks is retried `temperatureInc` hotter (0 turns fallback off). These are whisper.cpp's
 * own defaults, spelled out so the bench gives its CLI exactly the same.
 */
export type WhisperDecoding = { bestOf: number; temperature: number; temperatureInc: number };
export const DEFAULT_DECODING: WhisperDecoding = { bestOf: 5, temperature: 0, temperatureInc: 0.2 };

/** `language` is a whisper code or "auto" (detect); `prompt` the initial prompt (the vocabulary), absent or empty for none. */
export type WhisperParams = WhisperDecoding & { language: string; threads: number; prompt?: string };

/** A word from its tokens' timestamps: times in ms, `p` the mean probability of its tokens. */
export type WhisperWord = { t0: number; t1: number; text: string; p: number };

/**
 * Times in ms from the start of the audio; `p` is the mean probability of the segment's words,
 * null when a build cannot tell; `words` from a build that gives them (Parley's addon).
 */
export type WhisperOutput = { language: string; segments: { t0: number; t1: number; text: string; p: number | null; words?: WhisperWord[] }[] };

/** A native call in flight: `stop` asks whisper.cpp to give up. */
export type WhisperJob = { stop: () => void | Promise<void>; promise: Promise<WhisperOutput> };

/**
 * Which whisper.cpp build runs a model: "cpu-native" is Parley's addon compiled for this
 * machine (decision 046), the others are the prebuilt portable builds.
 */
export type WhisperBackend = "cpu-native" | "cpu" | GpuBackend;

/**
 * One model loaded in one whisper.cpp build; one call at a time. `countTokens` is the model's
 * own tokenizer, where the build exposes it (Parley's addon).
 */
export type WhisperRunner = {
  backend: WhisperBackend;
  transcribe: (pcm16k: Float32Array, params: WhisperParams) => WhisperJob;
  countTokens?: (text: string) => number;
};
