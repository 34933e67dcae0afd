/**
 * Where onnxruntime-node's addon is, inside a compiled executable: `scripts/build.ts`
 * rewrites onnxruntime-node's own `require` of its binding to read this (decision 090).
 * It is process-wide on purpose: a shared library is loaded once per process whatever
 * the caller, so there is nothing per-Deps to keep.
 */
export const ONNXRUNTIME_BINDING = Symbol.for("parley.onnxruntime-binding");

/** Points onnxruntime-node at the binding in a runtime folder; call before importing it. */
export function useOnnxruntimeFrom(folder: string): void {
  (globalThis as Record<symbol, unknown>)[ONNXRUNTIME_BINDING] = `${folder}/onnxruntime_binding.node`;
}
