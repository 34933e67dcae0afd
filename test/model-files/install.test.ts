import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, test } from "bun:test";
import { ensureTestModels } from "../../scripts/test-models/cache";
import { DownloadError, importModels, type ModelsContext, modelStatus, pullModel, removeModel, verifyModels } from "../../src/model-files/install";
import { ChecksumError, readInstalled } from "../../src/model-files/installed";
import { defaultManifest, findModel, type Manifest, UnknownModelError } from "../../src/model-files/manifest";
import { makeTempDir } from "../helpers";

const models = ensureTestModels();
const whisperBytes = new Uint8Array(readFileSync(models.whisper));
const ggufBytes = new Uint8Array(readFileSync(models.gguf));
const sha256 = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");
const sha1 = (b: Uint8Array) => createHash("sha1").update(b).digest("hex");

/** A local mirror serving the generated models; counts requests and honours Range like a real hub. */
const requests: { path: string; range: string | null }[] = [];
const served: Record<string, Uint8Array<ArrayBuffer>> = {
  "/org/whisper/resolve/main/tiny.bin": whisperBytes,
  "/org/llm/resolve/main/tiny.gguf": ggufBytes,
  "/org/embed/resolve/main/config.json": new TextEncoder().encode('{"model_type":"bert"}'),
  "/org/embed/resolve/main/onnx/model.onnx": new Uint8Array(1000).fill(7),
};
const server = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  fetch(req) {
    const url = new URL(req.url);
    const body = served[url.pathname];
    requests.push({ path: url.pathname, range: req.headers.get("range") });
    if (!body) return new Response("not found", { status: 404 });
    const range = req.headers.get("range")?.match(/^bytes=(\d+)-$/);
    if (range) {
      const from = Number(range[1]);
      if (from >= body.length) return new Response(null, { status: 416 });
      return new Response(body.slice(from), { status: 206, headers: { "content-range": `bytes ${from}-${body.length - 1}/${body.length}` } });
    }
    return new Response(body);
  },
});
afterAll(() => server.stop(true));
const mirror = `http://127.0.0.1:${server.port}`;

const manifest: Manifest = {
  models: [
    {
      name: "tiny-whisper",
      kind: "whisper",
      description: "",
      files: [{ path: "tiny-whisper/tiny.bin", url: "org/whisper/resolve/main/tiny.bin", size: whisperBytes.length, sha256: sha256(whisperBytes) }],
    },
    {
      name: "tiny-whisper-sha1",
      kind: "whisper",
      description: "",
      files: [{ path: "w1/tiny.bin", url: "org/whisper/resolve/main/tiny.bin", size: null, sha256: null, sha1: sha1(whisperBytes) }],
    },
    {
      name: "tiny-llm-unpinned",
      kind: "llm",
      description: "",
      files: [{ path: "tiny-llm/tiny.gguf", url: "org/llm/resolve/main/tiny.gguf", size: null, sha256: null }],
    },
    {
      name: "bad-checksum",
      kind: "llm",
      description: "",
      files: [{ path: "bad/tiny.gguf", url: "org/llm/resolve/main/tiny.gguf", size: null, sha256: "0".repeat(64) }],
    },
    {
      name: "tiny-embed",
      kind: "embedding",
      description: "",
      files: [
        { path: "tiny-embed/config.json", url: "org/embed/resolve/main/config.json", size: null, sha256: null },
        { path: "tiny-embed/onnx/model.onnx", url: "org/embed/resolve/main/onnx/model.onnx", size: null, sha256: "f".repeat(64) },
      ],
    },
    { name: "not-on-mirror", kind: "llm", description: "", files: [{ path: "x/none.gguf", url: "org/none.gguf", size: null, sha256: null }] },
    { name: "vad", kind: "vad", description: "", bundled: true, files: [] },
  ],
};

function context(extra: Partial<ModelsContext> = {}): ModelsContext & { events: { phase: string; done: number; total: number | null }[] } {
  const events: { phase: string; done: number; total: number | null }[] = [];
  return { modelsDir: join(makeTempDir(), "models"), mirror, manifest, onProgress: (e) => events.push(e), events, ...extra };
}

describe("models pull", () => {
  test("downloads from the mirror with progress, verifies SHA-256 and records the install", async () => {
    const ctx = context();
    await pullModel(ctx, "tiny-whisper");
    const path = join(ctx.modelsDir, "tiny-whisper/tiny.bin");
    expect(sha256(readFileSync(path))).toBe(sha256(whisperBytes));
    expect(existsSync(`${path}.part`)).toBe(false);
    const downloads = ctx.events.filter((e) => e.phase === "download");
    expect(downloads.at(-1)).toMatchObject({ done: whisperBytes.length, total: whisperBytes.length });
    expect(ctx.events.some((e) => e.phase === "verify")).toBe(true);
    expect(readInstalled(ctx.modelsDir)["tiny-whisper"]?.files["tiny-whisper/tiny.bin"]?.sha256).toBe(sha256(whisperBytes));
    expect(modelStatus(ctx, findModel(manifest, "tiny-whisper"))).toBe("installed");
  });

  test("a bad checksum is refused and nothing is installed, not even the partial file", async () => {
    const ctx = context();
    const err = await pullModel(ctx, "bad-checksum").catch((e) => e);
    expect(err).toBeInstanceOf(ChecksumError);
    expect(err.message).toContain("SHA-256 mismatch");
    expect(existsSync(join(ctx.modelsDir, "bad/tiny.gguf"))).toBe(false);
    expect(existsSync(join(ctx.modelsDir, "bad/tiny.gguf.part"))).toBe(false);
    expect(readInstalled(ctx.modelsDir)["bad-checksum"]).toBeUndefined();
  });

  test("one bad file of a multi-file model installs none of its files", async () => {
    const ctx = context();
    await expect(pullModel(ctx, "tiny-embed")).rejects.toBeInstanceOf(ChecksumError);
    expect(existsSync(join(ctx.modelsDir, "tiny-embed/config.json"))).toBe(false);
    expect(modelStatus(ctx, findModel(manifest, "tiny-embed"))).toBe("missing");
  });

  test("a SHA-1 from upstream is checked when no SHA-256 is pinned", async () => {
    const ctx = context();
    await pullModel(ctx, "tiny-whisper-sha1");
    expect((await verifyModels(ctx, "tiny-whisper-sha1"))[0]?.status).toBe("ok");
  });

  test("an interrupted download resumes with a Range request", async () => {
    const ctx = context();
    const dest = join(ctx.modelsDir, "tiny-whisper/tiny.bin");
    mkdirSync(join(ctx.modelsDir, "tiny-whisper"), { recursive: true });
    writeFileSync(`${dest}.part`, whisperBytes.subarray(0, 1000));
    requests.length = 0;
    await pullModel(ctx, "tiny-whisper");
    expect(requests).toEqual([{ path: "/org/whisper/resolve/main/tiny.bin", range: "bytes=1000-" }]);
    expect(sha256(readFileSync(dest))).toBe(sha256(whisperBytes));
  });

  test("the mirror setting decides where files come from; a missing file is a clear error", async () => {
    const elsewhere = context({ mirror: `${mirror}/nowhere` });
    await expect(pullModel(elsewhere, "tiny-whisper")).rejects.toThrow(
      new DownloadError(`GET ${mirror}/nowhere/org/whisper/resolve/main/tiny.bin answered 404`),
    );
    await expect(pullModel(context(), "not-on-mirror")).rejects.toThrow("answered 404");
  });

  test("an unknown name lists the known models; a bundled model needs no download", async () => {
    await expect(pullModel(context(), "gpt-5")).rejects.toBeInstanceOf(UnknownModelError);
    requests.length = 0;
    await pullModel(context(), "vad");
    expect(requests).toEqual([]);
  });
});

describe("models verify, import and remove", () => {
  test("an unpinned model records its SHA-256 at pull; later tampering is caught by verify", async () => {
    const ctx = context();
    await pullModel(ctx, "tiny-llm-unpinned");
    expect((await verifyModels(ctx))[0]).toEqual({ name: "tiny-llm-unpinned", status: "ok", detail: null });
    writeFileSync(join(ctx.modelsDir, "tiny-llm/tiny.gguf"), "tampered");
    const [result] = await verifyModels(ctx, "tiny-llm-unpinned");
    expect(result?.status).toBe("mismatch");
    expect(result?.detail).toContain("recorded at install");
  });

  test("verify of a model not installed says missing", async () => {
    expect(await verifyModels(context(), "tiny-whisper")).toEqual([
      { name: "tiny-whisper", status: "missing", detail: "tiny-whisper/tiny.bin is not installed" },
    ]);
  });

  test("import installs every model found in a flat air-gapped bundle, verifying checksums", async () => {
    const usb = makeTempDir();
    writeFileSync(join(usb, "tiny.bin"), whisperBytes);
    writeFileSync(join(usb, "tiny.gguf"), ggufBytes);
    const ctx = context();
    const { installed, refused } = await importModels(ctx, usb);
    expect(installed).toEqual(["tiny-whisper", "tiny-whisper-sha1", "tiny-llm-unpinned"]);
    expect(refused.map((r) => r.name)).toEqual(["bad-checksum"]);
    expect(existsSync(join(ctx.modelsDir, "bad/tiny.gguf"))).toBe(false);
    expect(readInstalled(ctx.modelsDir)["tiny-whisper"]?.source).toBe("import");
  });

  test("import of a corrupted file is refused", async () => {
    const usb = makeTempDir();
    writeFileSync(join(usb, "tiny.bin"), whisperBytes.subarray(0, 100));
    const ctx = context({ manifest: { models: [manifest.models[0]!] } });
    expect((await importModels(ctx, usb)).refused[0]?.reason).toContain("size mismatch");
    expect(existsSync(join(ctx.modelsDir, "tiny-whisper/tiny.bin"))).toBe(false);
  });

  test("import of a folder with no known model names what it found", async () => {
    const usb = makeTempDir();
    writeFileSync(join(usb, "holiday.jpg"), "x");
    await expect(importModels(context(), usb)).rejects.toThrow("found: holiday.jpg");
  });

  test("remove deletes the files and the record", async () => {
    const ctx = context();
    await pullModel(ctx, "tiny-whisper");
    removeModel(ctx, "tiny-whisper");
    expect(existsSync(join(ctx.modelsDir, "tiny-whisper/tiny.bin"))).toBe(false);
    expect(readInstalled(ctx.modelsDir)["tiny-whisper"]).toBeUndefined();
    expect(modelStatus(ctx, findModel(manifest, "tiny-whisper"))).toBe("missing");
  });
});

test("the shipped manifest parses and names the configured defaults", () => {
  for (const name of ["whisper-base.en", "qwen2.5-1.5b-instruct-q4", "all-minilm-l6-v2", "silero-vad"])
    expect(findModel(defaultManifest, name).name).toBe(name);
});
