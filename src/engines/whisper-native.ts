import { createRequire } from "node:module";
import { NATIVE_WHISPER, nativeWhisperStatus } from "./whisper-native-build";
import type { WhisperJob, WhisperParams, WhisperRunner } from "./whisper-runner";

type NativeContext = { readonly __whisperContext: unique symbol };
type NativeAddon = {
  load: (path: string) => Promise<NativeContext>;
  transcribe: (context: NativeContext, pcm16k: Float32Array, params: WhisperParams) => WhisperJob;
  systemInfo: () => string;
};

const require = createRequire(import.meta.url);

/** The addon, or null when it is not built for this machine (the portable build is used instead). */
export function nativeWhisperAddon(): NativeAddon | null {
  return nativeWhisperStatus().usable ? (require(NATIVE_WHISPER.addon) as NativeAddon) : null;
}

/** Loads a model in Parley's whisper.cpp addon; null when the addon is not built for this machine. */
export async function openNativeWhisper(path: string): Promise<WhisperRunner | null> {
  const addon = nativeWhisperAddon();
  if (!addon) return null;
  const context = await addon.load(path);
  return { backend: "cpu-native", transcribe: (pcm16k, params) => addon.transcribe(context, pcm16k, params) };
}
