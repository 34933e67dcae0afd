import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Glob } from "bun";

const ROOT = join(import.meta.dir, "..");
/** The one place that decides how many bytes an upload may have; every step asks it (decision 135). */
const SIZE_RULE = "src/modules/recordings/upload-rules.ts";
/** Where the setting is parsed and typed, not applied. */
const CONFIG = "src/config.ts";

/** A line that reads the upload limit: `config.uploads.maxBytes`, `const { maxBytes } = config.uploads`, or the variable itself. */
const READS_LIMIT = /\buploads\b.*\bmaxBytes\b|\bmaxBytes\b.*\buploads\b|PARLEY_MAX_UPLOAD_BYTES/;

test("only upload-rules.ts reads the upload size limit", () => {
  const readers: string[] = [];
  for (const file of new Glob("src/**/*.ts").scanSync(ROOT)) {
    const path = file.replaceAll("\\", "/");
    if (path === SIZE_RULE || path === CONFIG) continue;
    readFileSync(join(ROOT, path), "utf8")
      .split("\n")
      .forEach((line, i) => {
        if (READS_LIMIT.test(line)) readers.push(`${path}:${i + 1}: ${line.trim()}`);
      });
  }
  expect(readers).toEqual([]);
  // The check reads the rule's own file the same way, so a pattern that matches nothing fails here.
  expect(
    readFileSync(join(ROOT, SIZE_RULE), "utf8")
      .split("\n")
      .some((line) => READS_LIMIT.test(line)),
  ).toBe(true);
});
