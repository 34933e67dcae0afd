/**
 * Writes docs/decisions/README.md, the index of the decision records, from the records
 * themselves: number, title and, where a record says so near its top, what superseded it.
 * `bun scripts/decisions-index.ts` rewrites it; `--check` exits 1 when it is stale
 * (the test suite runs the check, so a new record cannot land unindexed).
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const DIR = join(import.meta.dir, "..", "docs", "decisions");
const INDEX = join(DIR, "README.md");

type DecisionRecord = { file: string; number: string; title: string; status: string };

/** A record is superseded when a line near its top says "Superseded ... by NNN" (wholly or in part). */
function statusOf(head: string, files: string[]): string {
  const m = head.match(/superseded( in part)? by \[?(\d{3})/i);
  if (!m) return "";
  const target = files.find((f) => f.startsWith(`${m[2]}-`));
  if (!target) throw new Error(`a decision record names ${m[2]} as superseding it, and there is no record ${m[2]}`);
  return `${m[1] ? "superseded in part by" : "superseded by"} [${m[2]}](${target})`;
}

export function readRecords(): DecisionRecord[] {
  const files = readdirSync(DIR)
    .filter((f) => /^\d{3}-.*\.md$/.test(f))
    .sort();
  return files.map((file) => {
    const text = readFileSync(join(DIR, file), "utf8");
    const lines = text.split("\n");
    const title = lines[0]!.replace(/^#\s*\d{3}\s*[:.]\s*/, "").trim();
    return { file, number: file.slice(0, 3), title, status: statusOf(lines.slice(0, 6).join("\n"), files) };
  });
}

export function renderIndex(records: DecisionRecord[]): string {
  const rows = records.map((r) => `| ${r.number} | [${r.title.replaceAll("|", "\\|")}](${r.file}) | ${r.status} |`);
  return [
    "# Decision records",
    "",
    "One page each: context, decision, consequences. A record that later evidence changes is not",
    "amended in place: a new record supersedes it and links back, and the old one says so in its",
    "first lines (`Superseded by NNN` or `Superseded in part by NNN`).",
    "",
    "This index is generated: `bun scripts/decisions-index.ts` rewrites it, and the test suite",
    "fails when it is stale.",
    "",
    "| # | Decision | Status |",
    "|---|---|---|",
    ...rows,
    "",
  ].join("\n");
}

if (import.meta.main) {
  const text = renderIndex(readRecords());
  if (process.argv.includes("--check")) {
    const current = (() => {
      try {
        return readFileSync(INDEX, "utf8");
      } catch {
        return "";
      }
    })();
    if (current !== text) {
      console.error("docs/decisions/README.md is stale: run `bun scripts/decisions-index.ts`");
      process.exit(1);
    }
  } else writeFileSync(INDEX, text);
}
