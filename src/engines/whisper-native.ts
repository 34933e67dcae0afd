import { createRequire } from "node:module";
import type { RuntimeFiles } from "../runtime/files";
import { throttleOpenMpSpinning } from "./openmp";
import { NATIVE_WHISPER, cpuFingerprint, nativeWhisperStatus } from "./whisper-native-build";
import type { WhisperJob, WhisperParams, WhisperRunner } from "./whisper-runner";

type NativeContext = { readonly __whisperContext: unique symbol };
type NativeAddon = {
  load: (path: string) => Promise<NativeContext>;
  transcribe: (context: NativeContext, pcm16k: Float32Array, params: WhisperParams) => WhisperJob;
  /** Absent from an addon built before vocabularies (rebuilt by npm run build:whisper). */
  tokenCount?: (context: NativeContext, text: string) => number;
  systemInfo: () => string;
};

const require = createRequire(import.meta.url);

/** The addon's name among a compiled executable's native files (decision 090). */
export const CARRIED_NATIVE_WHISPER = "whisper-native/parley_whisper.node";

/** Where Parley's addon is, or why it cannot be used here (for `parley doctor`). */
export type NativeWhisperLocation = { usable: true; addon: string } | { usable: false; reason: string };

/**
 * A compiled executable carries the addon built on its build machine, usable only on a CPU
 * with the same features (an illegal instruction would kill the process); a checkout uses
 * its own build in native/whisper/build.
 */
export function locateNativeWhisper(runtime?: RuntimeFiles): NativeWhisperLocation {
  if (runtime?.carried) {
    if (!runtime.has(CARRIED_NATIVE_WHISPER))
      return { usable: false, reason: "not carried by this executable (the addon was not built where it was compiled)" };
    if (runtime.whisperNativeCpu !== cpuFingerprint()) return { usable: false, reason: "carried, but built for a CPU with other features than this one" };
    return { usable: true, addon: runtime.file(CARRIED_NATIVE_WHISPER)! };
  }
  const status = nativeWhisperStatus();
  return status.usable ? { usable: true, addon: NATIVE_WHISPER.addon } : status;
}

/** Loads the addon found usable (whisper's and Parakeet's halves alike), with OpenMP told first (decision 201). */
export function requireNativeWhisper<Addon>(location: { addon: string }): Addon {
  throttleOpenMpSpinning();
  return require(location.addon) as Addon;
}

/** The addon, or null when it is not built for this machine (the portable build is used instead). */
export function nativeWhisperAddon(runtime?: RuntimeFiles): NativeAddon | null {
  const location = locateNativeWhisper(runtime);
  return location.usable ? requireNativeWhisper<NativeAddon>(location) : null;
}

/** Loads a model in Parley's whisper.cpp addon; null when the addon is not built for this machine. */
export async function openNativeWhisper(path: string, runtime?: RuntimeFiles): Promise<WhisperRunner | null> {
  const addon = nativeWhisperAddon(runtime);
  if (!addon) return null;
  const context = await addon.load(path);
  const { tokenCount } = addon;
  return {
    backend: "cpu-native",
    transcribe: (pcm16k, params) => addon.transcribe(context, pcm16k, params),
    countTokens: tokenCount ? (text) => tokenCount(context, text) : undefined,
  };
}
