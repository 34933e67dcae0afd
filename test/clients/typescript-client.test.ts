// The typed TypeScript client in clients/typescript: its generated types are current with the
// OpenAPI document, and the README's walk-through, written with it, type-checks under
// `tsc --strict` with no cast and runs against a real server from upload to Range read.
import { afterAll, describe, expect, test } from "bun:test";
import { execFileSync } from "node:child_process";
import { readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { clientSchema, SCHEMA_PATH } from "../../scripts/client";
import { systemClock } from "../../src/clock";
import { HashingTestEmbedder } from "../../src/engines/embedder.test-double";
import { ScriptedTranscriber } from "../../src/engines/transcriber.test-double";
import { makeTempDir, makeTenant, makeTestApp } from "../helpers";
import { fixture } from "../modules/recordings-support";

const ROOT = join(import.meta.dir, "../..");

/** The README's ```ts block that begins `// walk-through.ts`. */
function walkThrough(): string {
  const block = readFileSync(join(ROOT, "README.md"), "utf8").match(/```ts\n(\/\/ walk-through\.ts[\s\S]*?)```/);
  if (!block?.[1]) throw new Error("README.md has no ```ts block starting with // walk-through.ts");
  return block[1];
}

/** A folder laid out as a checkout is, for the walk-through: clients/ and node_modules/ beside it. */
function checkoutLike(): string {
  const dir = makeTempDir();
  symlinkSync(join(ROOT, "clients"), join(dir, "clients"));
  symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"));
  writeFileSync(join(dir, "walk-through.ts"), walkThrough());
  return dir;
}

describe("the typed TypeScript client", () => {
  let server: ReturnType<typeof Bun.serve> | undefined;
  let stopQueue: (() => Promise<void>) | undefined;
  afterAll(async () => {
    server?.stop(true);
    await stopQueue?.();
  });

  test("the committed types are what scripts/client.ts generates from docs/api/openapi.json", async () => {
    // Stale after an API change until `bun scripts/openapi.ts && bun scripts/client.ts` is run.
    expect(readFileSync(SCHEMA_PATH, "utf8") === (await clientSchema())).toBe(true);
  });

  test("the README's walk-through type-checks with tsc --strict and no cast", () => {
    const source = walkThrough();
    const code = source.split("\n").filter((line) => !line.startsWith("import "));
    expect(code.filter((line) => /\bas (?!const\b)|<[A-Za-z]+>\(|@ts-|!\./.test(line))).toEqual([]);
    const dir = checkoutLike();
    const tsc = join(ROOT, "node_modules/typescript/bin/tsc");
    const flags = [
      "--noEmit",
      "--strict",
      "--target",
      "es2022",
      "--module",
      "esnext",
      "--moduleResolution",
      "bundler",
      "--types",
      "node",
      "--lib",
      "es2022,dom",
      "--skipLibCheck",
    ];
    try {
      execFileSync(process.execPath, [tsc, ...flags, join(dir, "walk-through.ts")], { cwd: dir, stdio: "pipe" });
    } catch (err) {
      throw new Error(`the walk-through does not type-check:\n${(err as { stdout?: Buffer }).stdout?.toString()}`);
    }
  }, 120_000);

  test("the README's walk-through runs against a real server: upload, transcription, search, Ask and a Range read", async () => {
    const transcriber = new ScriptedTranscriber({
      segments: () => [{ start: 0, end: 3, text: " The marketing budget for next quarter is forty thousand dollars.", confidence: 0.9 }],
    });
    // The walk-through polls as a client does: the clock is the real one and the queue works in the background, as in `parley serve`.
    const t = await makeTestApp({
      clock: systemClock,
      engines: { embedder: new HashingTestEmbedder(), transcriber },
      env: { PARLEY_ASK_PROVIDER: "extractive" },
    });
    t.deps.queue.start();
    stopQueue = () => t.deps.queue.stop();
    const key = makeTenant(t.deps).test;
    server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: (req) => t.app.handle(req) });
    const dir = checkoutLike();
    const audio = join(dir, "talk.wav");
    writeFileSync(audio, fixture("tone-3s.wav"));
    // Spawned, not run synchronously: the server answering it lives in this process.
    const run = Bun.spawn([process.execPath, "walk-through.ts", audio], {
      cwd: dir,
      env: { ...process.env, PARLEY_URL: `http://127.0.0.1:${server.port}`, PARLEY_KEY: key },
      stdout: "pipe",
      stderr: "pipe",
    });
    const [out, err, code] = await Promise.all([new Response(run.stdout).text(), new Response(run.stderr).text(), run.exited]);
    expect({ code, err }).toEqual({ code: 0, err: "" });
    const lines = out.trim().split("\n");
    expect(lines[0]).toMatch(/^uploaded \d+ bytes; \d+ requests left this minute$/);
    expect(lines[1]).toBe("completed The marketing budget for next quarter is forty thousand dollars.");
    expect(out).toContain("forty thousand dollars");
    expect(lines.at(-1)).toMatch(/^206 bytes 0-43\/\d+ 44$/);
  }, 120_000);

  test("without the models installed, the README's walk-through stops at the transcription and names the command that installs it", async () => {
    // A fresh install: the real engines over an empty models folder, as a newcomer runs it first.
    const t = await makeTestApp({ clock: systemClock });
    t.deps.queue.start();
    const key = makeTenant(t.deps).test;
    const bare = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: (req) => t.app.handle(req) });
    try {
      const dir = checkoutLike();
      writeFileSync(join(dir, "talk.wav"), fixture("tone-3s.wav"));
      const run = Bun.spawn([process.execPath, "walk-through.ts", "talk.wav"], {
        cwd: dir,
        env: { ...process.env, PARLEY_URL: `http://127.0.0.1:${bare.port}`, PARLEY_KEY: key },
        stdout: "pipe",
        stderr: "pipe",
      });
      const [err, code] = await Promise.all([new Response(run.stderr).text(), run.exited]);
      expect(code).toBe(1);
      expect(err).toContain("transcription failed: The whisper model whisper-base.en is not installed");
      expect(err).toContain("models pull whisper-base.en");
    } finally {
      bare.stop(true);
      await t.deps.queue.stop();
    }
  }, 120_000);
});
