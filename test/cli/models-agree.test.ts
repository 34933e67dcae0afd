// Issue 31, item 4: one rule for what "installed" means, shared by `models import`,
// `models verify`, `models list`, doctor and GET /v1/health; refusals name what was
// expected; a refused import leaves nothing behind (decision 120).
import { copyFileSync, existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, test } from "bun:test";
import { ensureTestModels } from "../../scripts/test-models/cache";
import { makeTempDir, makeTestApp } from "../helpers";

const models = ensureTestModels();
const cli = join(import.meta.dir, "../../src/cli.ts");

async function run(args: string[], env: Record<string, string>) {
  const proc = Bun.spawn([process.execPath, cli, ...args], { env: { PATH: process.env.PATH ?? "", ...env }, stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { stdout, stderr, code };
}

function dataDir() {
  const dir = makeTempDir();
  return { dir, modelsDir: join(dir, "models"), env: { PARLEY_DATA_DIR: dir, PARLEY_MODELS_DIR: join(dir, "models"), PARLEY_GPU: "off" } };
}

describe("a stand-in under a published name", () => {
  test("import refuses it, saying what the file is and how to use a model of one's own; nothing of it is left", async () => {
    const { modelsDir, env } = dataDir();
    const usb = makeTempDir();
    // The tiny generated whisper model, named as whisper-base.en's file.
    copyFileSync(models.whisper, join(usb, "ggml-base.en.bin"));
    const imported = await run(["models", "import", usb], env);
    expect(imported.code).toBe(1);
    expect(imported.stderr).toContain("refused whisper-base.en: whisper-base.en/ggml-base.en.bin: f16, 32 wide, 1 encoder and 1 decoder layers");
    expect(imported.stderr).toContain("not the f16 file the manifest describes for whisper-base.en (f16, 512 wide, 6 encoder and 6 decoder layers");
    expect(imported.stderr).toContain("set PARLEY_WHISPER_MODEL (or PARLEY_LLM_MODEL) to its file's path");
    expect(existsSync(join(modelsDir, "whisper-base.en"))).toBe(false);
    // Verify and doctor agree with the refusal: not installed.
    expect(JSON.parse((await run(["models", "verify", "--json"], env)).stdout)).toEqual([]);
    const doctor = JSON.parse((await run(["doctor", "--json"], env)).stdout) as { check: string; ok: boolean; detail: string }[];
    expect(doctor.find((c) => c.check === "transcriber")).toMatchObject({
      ok: false,
      detail: "whisper-base.en is not installed: npm run parley -- models pull whisper-base.en",
    });
  });

  test("put there by hand: list, verify, doctor and GET /v1/health all say it is not the model (mismatch), none says ok", async () => {
    const { modelsDir, env } = dataDir();
    mkdirSync(join(modelsDir, "whisper-base.en"), { recursive: true });
    copyFileSync(models.whisper, join(modelsDir, "whisper-base.en/ggml-base.en.bin"));

    const list = JSON.parse((await run(["models", "list", "--json"], env)).stdout) as { name: string; status: string }[];
    expect(list.find((m) => m.name === "whisper-base.en")?.status).toBe("mismatch");
    const verify = await run(["models", "verify", "--json"], env);
    expect(verify.code).toBe(1);
    const [result] = JSON.parse(verify.stdout);
    expect(result).toMatchObject({ name: "whisper-base.en", status: "mismatch" });
    expect(result.detail).toContain("not the f16 file the manifest describes for whisper-base.en");
    const doctor = await run(["doctor", "--json"], env);
    const transcriber = (JSON.parse(doctor.stdout) as { check: string; ok: boolean; detail: string }[]).find((c) => c.check === "transcriber");
    expect(transcriber?.ok).toBe(false);
    expect(transcriber?.detail).toContain("not the f16 file the manifest describes for whisper-base.en");
    expect(transcriber?.detail).toEndWith("reinstall it: npm run parley -- models pull whisper-base.en");

    const t = await makeTestApp({ env: { PARLEY_MODELS_DIR: modelsDir } });
    const health = await t.call("GET", "/v1/health");
    expect(health.body.status).toBe("degraded");
    expect(health.body.models[0]).toEqual({
      engine: "transcriber",
      model: "whisper-base.en",
      status: "mismatch",
      install: "npm run parley -- models pull whisper-base.en",
    });
  });
});

describe("import refusals", () => {
  test("a file named otherwise: the refusal names the file names import looks for", async () => {
    const { env } = dataDir();
    const { stderr, code } = await run(["models", "import", models.whisper], env);
    expect(code).toBe(1);
    expect(stderr).toContain("no model of the manifest was found in");
    expect(stderr).toContain("(found: tiny-whisper.bin)");
    expect(stderr).toContain("ggml-base.en.bin (whisper-base.en)");
    expect(stderr).toContain("qwen2.5-1.5b-instruct-q4_k_m.gguf (qwen2.5-1.5b-instruct-q4)");
    expect(stderr).toContain("config.json + tokenizer.json + tokenizer_config.json + onnx/model.onnx (all-minilm-l6-v2)");
  });

  test("a folder with some of a model's files says which are lacking", async () => {
    const { env } = dataDir();
    const usb = makeTempDir();
    writeFileSync(join(usb, "tokenizer_config.json"), "{}");
    const { stderr, code } = await run(["models", "import", usb], env);
    expect(code).toBe(1);
    expect(stderr).toContain("incomplete: all-minilm-l6-v2 lacks config.json, tokenizer.json, onnx/model.onnx");
  });

  test("a refused model leaves no folder behind (no empty all-minilm-l6-v2/onnx/)", async () => {
    const { modelsDir, env } = dataDir();
    const usb = makeTempDir();
    mkdirSync(join(usb, "all-minilm-l6-v2/onnx"), { recursive: true });
    for (const f of ["config.json", "tokenizer.json", "tokenizer_config.json", "onnx/model.onnx"])
      writeFileSync(join(usb, "all-minilm-l6-v2", f), "not the model");
    const { stderr, code } = await run(["models", "import", usb], env);
    expect(code).toBe(1);
    expect(stderr).toContain("refused all-minilm-l6-v2: all-minilm-l6-v2/config.json: size mismatch");
    expect(existsSync(modelsDir) ? readdirSync(modelsDir, { recursive: true }) : []).toEqual([]);
  });
});
