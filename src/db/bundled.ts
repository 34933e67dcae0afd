/**
 * Assets a compiled executable carries inside itself. From a checkout this is null and
 * they are read from disk; `scripts/build.ts` replaces this module at compile time with
 * the migrations inlined and sqlite-vec's library embedded.
 */
export const bundled: { migrations: { name: string; sql: string }[]; vecExtension: string } | null = null;
