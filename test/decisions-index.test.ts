import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { readRecords, renderIndex } from "../scripts/decisions-index";

test("docs/decisions/README.md indexes every decision record as the records say (run `bun scripts/decisions-index.ts`)", () => {
  const index = readFileSync(join(import.meta.dir, "..", "docs", "decisions", "README.md"), "utf8");
  expect(index).toBe(renderIndex(readRecords()));
});

test("each decision record has a title line and a Decision section", () => {
  for (const r of readRecords()) {
    expect(r.title.length, r.file).toBeGreaterThan(0);
    expect(readFileSync(join(import.meta.dir, "..", "docs", "decisions", r.file), "utf8"), r.file).toMatch(/^## Decision/m);
  }
});
