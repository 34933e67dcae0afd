import { parseArgs } from "node:util";

/** Thrown for a wrong command line; the CLI prints it with the usage and exits 2. */
export class UsageError extends Error {}

type Options = Record<string, { type: "string" | "boolean"; short?: string }>;

/** Parses flags strictly, so a misspelt option is an error rather than silently ignored. */
export function parseFlags<O extends Options>(args: string[], options: O) {
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

/** Prints a record as JSON (--json) or as aligned "key: value" lines for people. */
export function printRecord(record: Record<string, unknown>, json: boolean): void {
  if (json) {
    console.log(JSON.stringify(record));
    return;
  }
  const width = Math.max(...Object.keys(record).map((k) => k.length));
  for (const [k, v] of Object.entries(record)) console.log(`${k.padEnd(width)}  ${v === null ? "-" : Array.isArray(v) ? v.join(",") : String(v)}`);
}
