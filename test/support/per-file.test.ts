import { expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { makeTempDir } from "../helpers";

// Two test files run by `bun test` in one process with the suite's preload: what the first
// opened must be released before the second's first test, not only after the first file of
// the whole run (decision 222).
test("what a test file opened is released before the next file's first test, and the last file's after the run", () => {
  const dir = makeTempDir();
  const perFile = join(import.meta.dir, "per-file.ts");
  const file = (name: string) => `
    import { expect, test } from "bun:test";
    import { releaseAfterFile } from ${JSON.stringify(perFile)};
    releaseAfterFile(() => console.log("released ${name}"));
    test("${name}", () => console.log("test ${name}"));
  `;
  mkdirSync(join(dir, "t"));
  writeFileSync(join(dir, "t", "a.test.ts"), file("a"));
  writeFileSync(join(dir, "t", "b.test.ts"), file("b"));
  const preload = join(import.meta.dir, "..", "preload.ts");
  const run = Bun.spawnSync([process.execPath, "test", "--preload", preload, "./t/a.test.ts", "./t/b.test.ts"], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? "" },
  });
  expect(run.exitCode).toBe(0);
  const lines = run.stdout
    .toString()
    .split("\n")
    .filter((l) => /^(test|released) /.test(l));
  expect(lines).toEqual(["test a", "released a", "test b", "released b"]);
});
