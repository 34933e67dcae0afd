import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, test } from "bun:test";
import { ensureTestModels } from "../../scripts/test-models/cache";
import { loadConfig } from "../../src/config";
import { nativeWhisperStatus } from "../../src/engines/whisper-native-build";
import { diagnose } from "../../src/cli/doctor";
import { makeTempDir } from "../helpers";

const models = ensureTestModels();
const bun = process.execPath;
const cli = join(import.meta.dir, "../../src/cli.ts");

/** A mirror laid out like the public hub, serving the tiny model under the manifest's real URL of whisper-base. */
const server = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  fetch(req) {
    const path = new URL(req.url).pathname;
    if (path === "/ggerganov/whisper.cpp/resolve/main/ggml-base.bin") return new Response(Bun.file(models.whisper));
    return new Response("not found", { status: 404 });
  },
});
afterAll(() => server.stop(true));

async function run(args: string[], env: Record<string, string>) {
  const proc = Bun.spawn([bun, cli, ...args], { env: { PATH: process.env.PATH ?? "", ...env }, stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { stdout, stderr, code };
}

describe("parley models (the command line)", () => {
  test("list shows the manifest with status and the role of configured models", async () => {
    const dir = makeTempDir();
    const { stdout, code } = await run(["models", "list", "--json"], { PARLEY_DATA_DIR: dir, PARLEY_MODELS_DIR: join(dir, "models") });
    expect(code).toBe(0);
    const rows = JSON.parse(stdout) as { name: string; status: string; in_use_as: string | null }[];
    expect(rows.find((r) => r.name === "whisper-base.en")).toMatchObject({ status: "missing", in_use_as: "transcriber" });
    expect(rows.find((r) => r.name === "silero-vad")).toMatchObject({ status: "bundled" });
  });

  test("pull honours PARLEY_MODEL_MIRROR; a file that does not match its pins is refused with exit 1 and nothing installed", async () => {
    const dir = makeTempDir();
    const env = { PARLEY_DATA_DIR: dir, PARLEY_MODELS_DIR: join(dir, "models"), PARLEY_MODEL_MIRROR: `http://127.0.0.1:${server.port}` };
    // The mirror serves the tiny model where the real base belongs: its pinned size and digests do not match.
    const { stderr, code } = await run(["models", "pull", "whisper-base"], env);
    expect(code).toBe(1);
    expect(stderr).toContain("size mismatch (expected 147951465");
    expect(existsSync(join(dir, "models/whisper-base/ggml-base.bin"))).toBe(false);
  });

  test("import, verify, tamper, verify fails with exit 1, remove", async () => {
    const dir = makeTempDir();
    const env = { PARLEY_DATA_DIR: dir, PARLEY_MODELS_DIR: join(dir, "models") };
    const usb = makeTempDir();
    writeFileSync(join(usb, "qwen2.5-1.5b-instruct-q4_k_m.gguf"), readFileSync(models.gguf));
    const imported = await run(["models", "import", usb], env);
    expect(imported.stdout).toContain("installed qwen2.5-1.5b-instruct-q4");
    expect(imported.code).toBe(0);
    expect((await run(["models", "verify", "qwen2.5-1.5b-instruct-q4"], env)).code).toBe(0);
    writeFileSync(join(dir, "models/qwen2.5-1.5b-instruct-q4/qwen2.5-1.5b-instruct-q4_k_m.gguf"), "tampered");
    const verify = await run(["models", "verify", "--json"], env);
    expect(verify.code).toBe(1);
    expect(JSON.parse(verify.stdout)[0]).toMatchObject({ name: "qwen2.5-1.5b-instruct-q4", status: "mismatch" });
    expect((await run(["models", "remove", "qwen2.5-1.5b-instruct-q4"], env)).code).toBe(0);
    expect(existsSync(join(dir, "models/qwen2.5-1.5b-instruct-q4/qwen2.5-1.5b-instruct-q4_k_m.gguf"))).toBe(false);
  });

  test("an unknown model name is one clear line and exit 1", async () => {
    const dir = makeTempDir();
    const { stderr, code } = await run(["models", "pull", "gpt-5"], { PARLEY_DATA_DIR: dir, PARLEY_MODELS_DIR: join(dir, "models") });
    expect(code).toBe(1);
    expect(stderr).toContain("unknown model gpt-5");
  });
});

describe("parley doctor", () => {
  test("a box upgraded with only the earlier default's Q4_K_M file keeps it, and is told of the Q4_0 default (decision 235)", async () => {
    const dir = makeTempDir();
    const env = { PARLEY_DATA_DIR: dir, PARLEY_MODELS_DIR: join(dir, "models") };
    const usb = makeTempDir();
    writeFileSync(join(usb, "qwen2.5-1.5b-instruct-q4_k_m.gguf"), readFileSync(models.gguf));
    expect((await run(["models", "import", usb], env)).code).toBe(0);
    const llmOf = async (extra: Record<string, string> = {}) =>
      (JSON.parse((await run(["doctor", "--json"], { ...env, ...extra })).stdout) as { check: string; ok: boolean; detail: string }[]).find(
        (c) => c.check === "llm",
      )!;
    const kept = await llmOf();
    expect(kept.ok).toBe(true);
    expect(kept.detail).toStartWith("qwen2.5-1.5b-instruct-q4 on ");
    expect(kept.detail).toContain("the default is now qwen2.5-1.5b-instruct-q4_0");
    expect(kept.detail).toContain("npm run parley -- models pull qwen2.5-1.5b-instruct-q4_0, then restart");
    // Chosen on purpose, it is not questioned.
    const chosen = await llmOf({ PARLEY_LLM_MODEL: "qwen2.5-1.5b-instruct-q4" });
    expect(chosen.ok).toBe(true);
    expect(chosen.detail).not.toContain("the default is now");
  });

  test("missing models: one failing verdict per engine, Ask's provider agreeing with its llm, and the command that installs each", async () => {
    const dir = makeTempDir();
    const { stdout, code } = await run(["doctor", "--json"], { PARLEY_DATA_DIR: dir, PARLEY_MODELS_DIR: join(dir, "models") });
    expect(code).toBe(1);
    const checks = JSON.parse(stdout) as { check: string; ok: boolean; detail: string }[];
    // Each thing is judged once: no "FAIL model embedder" beside an "ok embedder".
    expect(new Set(checks.map((c) => c.check)).size).toBe(checks.length);
    // From a checkout, the command a checkout runs.
    expect(checks.find((c) => c.check === "transcriber")).toEqual({
      check: "transcriber",
      ok: false,
      detail: "whisper-base.en is not installed: npm run parley -- models pull whisper-base.en",
    });
    expect(checks.find((c) => c.check === "llm")).toMatchObject({
      ok: false,
      detail: "qwen2.5-1.5b-instruct-q4_0 is not installed: npm run parley -- models pull qwen2.5-1.5b-instruct-q4_0",
    });
    expect(checks.find((c) => c.check === "embedder")).toMatchObject({
      ok: false,
      detail: "all-minilm-l6-v2 is not installed: npm run parley -- models pull all-minilm-l6-v2",
    });
    expect(checks.find((c) => c.check === "ask provider")).toMatchObject({ ok: false });
    expect(checks.find((c) => c.check === "ask provider")?.detail).toContain("PARLEY_ASK_PROVIDER=extractive");
    // ffmpeg when a new enough one is installed, else the built-in decoders (decision 091).
    expect(checks.find((c) => c.check === "ffmpeg" || c.check === "audio decoder")?.ok).toBe(true);
    expect(checks.find((c) => c.check === "vad")?.ok).toBe(true);
  });

  test("from the executable the advice is the executable's: no npm, no checkout scripts", async () => {
    const dir = makeTempDir();
    const config = loadConfig({ PARLEY_DATA_DIR: dir, PARLEY_MODELS_DIR: join(dir, "models") });
    const checks = await diagnose(config, { context: { executable: true, cli: "parley" } });
    expect(checks.find((c) => c.check === "transcriber")?.detail).toBe("whisper-base.en is not installed: parley models pull whisper-base.en");
    expect(checks.filter((c) => /npm|build:whisper/.test(c.detail))).toEqual([]);
  });

  test("Ask's provider is judged by what it needs: extractive needs nothing, openai_compatible its settings", async () => {
    const dir = makeTempDir();
    const ask = async (env: Record<string, string>) =>
      (await diagnose(loadConfig({ PARLEY_DATA_DIR: dir, PARLEY_MODELS_DIR: join(dir, "models"), ...env }))).find((c) => c.check === "ask provider");
    expect(await ask({ PARLEY_ASK_PROVIDER: "extractive" })).toMatchObject({ ok: true });
    expect(await ask({ PARLEY_ASK_PROVIDER: "openai_compatible" })).toMatchObject({ ok: false });
    expect(await ask({ PARLEY_ASK_PROVIDER: "openai_compatible", PARLEY_OPENAI_BASE_URL: "http://127.0.0.1:9/v1", PARLEY_OPENAI_MODEL: "m" })).toMatchObject({
      ok: true,
    });
  });

  test("with models present it loads them and reports the backend actually used", async () => {
    const dir = makeTempDir();
    const config = loadConfig({
      PARLEY_DATA_DIR: dir,
      PARLEY_MODELS_DIR: join(dir, "models"),
      PARLEY_WHISPER_MODEL: models.whisper,
      PARLEY_LLM_MODEL: models.gguf,
      PARLEY_GPU: "off",
    });
    const checks = await diagnose(config);
    const whisperBuild = nativeWhisperStatus().usable ? "cpu-native" : "cpu";
    expect(checks.find((c) => c.check === "transcriber")).toEqual({ check: "transcriber", ok: true, detail: `${models.whisper} on ${whisperBuild}` });
    expect(checks.find((c) => c.check === "whisper build")?.detail).toStartWith(
      whisperBuild === "cpu-native" ? "cpu-native: Parley's addon compiled for this CPU" : "cpu-native not built",
    );
    expect(checks.find((c) => c.check === "llm")).toEqual({ check: "llm", ok: true, detail: `${models.gguf} on cpu` });
    expect(checks.find((c) => c.check === "ask provider")).toEqual({ check: "ask provider", ok: true, detail: `llama_cpp on ${models.gguf} on cpu` });
    expect(checks.find((c) => c.check === "gpu")?.detail).toContain("PARLEY_GPU=off");
    expect(checks.find((c) => c.check === "diarization")?.detail).toBe("classic (classic-bic-mfcc)");
  });
});
