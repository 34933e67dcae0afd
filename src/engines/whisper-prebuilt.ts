import { createRequire } from "node:module";
import type { WhisperContext } from "@fugood/whisper.node";
import type { RuntimeFiles } from "../runtime/files";
import { throttleOpenMpSpinning } from "./openmp";
import type { GpuBackend } from "./gpu";
import type { WhisperRunner } from "./whisper-runner";

type WhisperModule = { WhisperContext: WhisperContext };

const require = createRequire(import.meta.url);

/** The portable CPU build's name among a compiled executable's native files (decision 090). */
export const CARRIED_PORTABLE_WHISPER = "whisper-portable/index.node";

/**
 * Loads one prebuilt whisper.cpp addon of @fugood/whisper.node; a GPU build whose driver
 * libraries are absent fails here. Literal names on linux-x64 so a bundler can find them.
 */
function loadAddon(backend: GpuBackend | "cpu", runtime?: RuntimeFiles): WhisperModule {
  throttleOpenMpSpinning();
  // A compiled executable carries the portable CPU build only; a GPU image runs from a checkout.
  if (runtime?.carried) {
    const file = backend === "cpu" ? runtime.file(CARRIED_PORTABLE_WHISPER) : null;
    if (!file) throw new Error(`this executable carries no ${backend} build of whisper.cpp`);
    return require(file);
  }
  if (process.platform === "linux" && process.arch === "x64") {
    if (backend === "cuda") return require("@fugood/node-whisper-linux-x64-cuda");
    if (backend === "vulkan") return require("@fugood/node-whisper-linux-x64-vulkan");
    return require("@fugood/node-whisper-linux-x64");
  }
  return require(`@fugood/node-whisper-${process.platform}-${process.arch}${backend === "cpu" ? "" : `-${backend}`}`);
}

const quietCalls = new Map<WhisperModule, number>();

/**
 * Silences whisper.cpp's log until the returned release is called (once or more): it prints
 * reports on stderr unless given a log callback, and the server logs JSON lines only. The
 * callback is a thread-safe function that keeps the event loop alive, so it is set only while
 * native calls run (counted across engines): a CLI command or bench that used Whisper can then exit.
 */
function silence(addon: WhisperModule): () => void {
  const calls = quietCalls.get(addon) ?? 0;
  quietCalls.set(addon, calls + 1);
  if (calls === 0) addon.WhisperContext.toggleNativeLog(true, () => {});
  let released = false;
  return () => {
    if (released) return;
    released = true;
    const left = (quietCalls.get(addon) ?? 1) - 1;
    quietCalls.set(addon, left);
    if (left === 0) addon.WhisperContext.toggleNativeLog(false);
  };
}

/** Float samples in [-1, 1] to the 16-bit PCM the binding's transcribeData takes. */
function toPcm16(pcm: Float32Array): ArrayBuffer {
  const out = new Int16Array(pcm.length);
  for (let i = 0; i < pcm.length; i++) out[i] = Math.max(-32768, Math.min(32767, Math.round((pcm[i] ?? 0) * 32767)));
  return out.buffer;
}

/**
 * Loads a model in a prebuilt @fugood/whisper.node build: the CPU build is compiled for any
 * x86-64 (no AVX), the CUDA and Vulkan builds run on a GPU. Their results carry no word
 * probabilities.
 */
export async function openPrebuiltWhisper(backend: GpuBackend | "cpu", path: string, runtime?: RuntimeFiles): Promise<WhisperRunner> {
  const addon = loadAddon(backend, runtime);
  const release = silence(addon);
  const context = await Promise.resolve()
    .then(() => new addon.WhisperContext({ filePath: path, useGpu: backend !== "cpu" }))
    .finally(release);
  return {
    backend,
    transcribe(pcm16k, { threads, ...params }) {
      const release = silence(addon);
      const job = context.transcribeData(toPcm16(pcm16k), { ...params, maxThreads: threads });
      const promise = job.promise.then((r) => ({
        language: r.language ?? "",
        segments: r.segments.map((s) => ({ t0: s.t0, t1: s.t1, text: s.text, p: null })),
      }));
      // A stopped call may never settle (see settledOrAborted): stopping also ends the silence.
      return { stop: () => (release(), job.stop()), promise: promise.finally(release) };
    },
  };
}
