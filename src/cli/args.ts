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
  console.log(formatTable(Object.entries(record).map(([k, v]) => [k, v === null ? "-" : Array.isArray(v) ? v.join(",") : String(v)])));
}

/**
 * Rows as aligned columns for people: each column as wide as its widest cell, two spaces
 * apart, the last one unpadded. The one formatter of the CLI's tables (help, lists).
 */
export function formatTable(rows: readonly (readonly string[])[], indent = ""): string {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  return rows
    .map(
      (row) =>
        indent +
        row
          .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!)))
          .join("  ")
          .trimEnd(),
    )
    .join("\n");
}
