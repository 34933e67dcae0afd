/**
 * Where node-llama-cpp's prebuilt llama.cpp binaries are, inside a compiled executable:
 * `scripts/build.ts` rewrites node-llama-cpp's lookup of its `bins/` folder to read this
 * first (decision 092). Process-wide like onnxruntime's (src/runtime/onnxruntime.ts): a
 * library loads once per process whatever the caller.
 */
export const LLAMA_PREBUILT_BINS = Symbol.for("parley.llama-prebuilt-bins");

/** The runtime folder's prefix for the carried CPU build: `llama/linux-x64/llama-addon.node` and its libraries. */
export const CARRIED_LLAMA = "llama";

/** Points node-llama-cpp at the prebuilt binaries under a runtime folder; call before its first getLlama(). */
export function useLlamaBinsFrom(folder: string): void {
  (globalThis as Record<symbol, unknown>)[LLAMA_PREBUILT_BINS] = folder;
}
