/** One native file the executable carries: where it sits inside the executable, and its SHA-256. */
export type BundledFile = { embedded: string; sha256: string };

/**
 * The native files a compiled executable carries inside itself (decision 090). From a
 * checkout this is null and the engines load their files from node_modules;
 * `scripts/build.ts` replaces this module at compile time. `version` names the runtime
 * folder: the package version plus a hash of every carried file, so two builds never
 * share a folder. `whisperNativeCpu` is the CPU fingerprint Parley's addon was built for.
 */
export const bundledRuntime: { version: string; files: Record<string, BundledFile>; whisperNativeCpu: string | null } | null = null;
