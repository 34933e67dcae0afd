/**
 * What a compiled executable carries for the database: the migrations, inlined by
 * `scripts/build.ts` at compile time. From a checkout this is null and they are read from
 * disk. (sqlite-vec's library is one of the executable's native files: src/runtime.)
 */
export const bundled: { migrations: { name: string; sql: string }[] } | null = null;
