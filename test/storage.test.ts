import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadConfig } from "../src/config";
import { createStorage } from "../src/storage";
import { LocalStorage } from "../src/storage/local";
import { S3_PREFIX, S3Storage } from "../src/storage/s3";
import { Scratch, scratchRoot } from "../src/storage/scratch";
import { chunksOf, ObjectTooLargeError } from "../src/storage/storage";
import { makeTempDir } from "./helpers";

async function* bytes(...parts: string[]) {
  for (const p of parts) yield new TextEncoder().encode(p);
}
const text = async (s: ReadableStream<Uint8Array>) => new Response(s).text();

describe("local storage", () => {
  test("write measures the size and the object reads back whole or by range", async () => {
    const s = new LocalStorage(makeTempDir());
    const r = await s.write("p/test/rec_1/upload-a", bytes("hello ", "world"));
    expect(r).toEqual({ size: 11 });
    expect(await s.size("p/test/rec_1/upload-a")).toBe(11);
    expect(await text(s.read("p/test/rec_1/upload-a"))).toBe("hello world");
    expect(await text(s.read("p/test/rec_1/upload-a", { start: 6, end: 10 }))).toBe("world");
    expect(await s.withLocalFile("p/test/rec_1/upload-a", async (path) => Bun.file(path).text())).toBe("hello world");
  });

  test("a write that fails midway leaves nothing under the key and no temp file", async () => {
    const root = makeTempDir();
    const s = new LocalStorage(root);
    async function* failing() {
      yield new Uint8Array(100);
      throw new Error("client went away");
    }
    await expect(s.write("p/test/rec_2/upload-a", failing())).rejects.toThrow("client went away");
    await Bun.sleep(10);
    expect(await s.size("p/test/rec_2/upload-a")).toBeNull();
    expect(readdirSync(join(root, ".tmp"))).toEqual([]);
  });

  test("over maxBytes: ObjectTooLargeError and nothing stored", async () => {
    const s = new LocalStorage(makeTempDir());
    await expect(s.write("p/test/rec_3/upload-a", bytes("12345", "67890"), { maxBytes: 8 })).rejects.toBeInstanceOf(ObjectTooLargeError);
    await Bun.sleep(10);
    expect(await s.size("p/test/rec_3/upload-a")).toBeNull();
  });

  test("an existing key is replaced atomically; remove and removePrefix tolerate missing objects", async () => {
    const s = new LocalStorage(makeTempDir());
    await s.write("p/test/rec_4/a", bytes("one"));
    await s.write("p/test/rec_4/a", bytes("two"));
    await s.write("p/test/rec_4/b", bytes("three"));
    expect(await text(s.read("p/test/rec_4/a"))).toBe("two");
    await s.remove("p/test/rec_4/a");
    await s.remove("p/test/rec_4/a");
    expect(await s.size("p/test/rec_4/a")).toBeNull();
    await s.removePrefix("p/test/rec_4/");
    expect(await s.size("p/test/rec_4/b")).toBeNull();
    await s.removePrefix("p/test/rec_4/");
  });

  test("sweepPartial removes only temp files older than the cutoff", async () => {
    const root = makeTempDir();
    const s = new LocalStorage(root);
    writeFileSync(join(root, ".tmp", "old.part"), "x");
    writeFileSync(join(root, ".tmp", "new.part"), "x");
    utimesSync(join(root, ".tmp", "old.part"), new Date("2020-01-01"), new Date("2020-01-01"));
    expect(await s.sweepPartial(new Date(Date.now() - 3600_000))).toBe(1);
    expect(existsSync(join(root, ".tmp", "new.part"))).toBe(true);
  });

  test("keys that could escape the root are refused", async () => {
    const s = new LocalStorage(makeTempDir());
    for (const key of ["../x", "a/../../x", "/etc/passwd", "a//b", ""]) expect(() => s.pathOf(key)).toThrow("unsafe storage key");
  });

  test("chunksOf iterates a web stream", async () => {
    const parts: string[] = [];
    for await (const c of chunksOf(new Blob(["ab", "cd"]).stream())) parts.push(new TextDecoder().decode(c));
    expect(parts.join("")).toBe("abcd");
  });
});

describe("storage selection and S3 layout (no S3 server here: construction and keys only)", () => {
  test("local disk under <dataDir>/audio by default", () => {
    const dir = makeTempDir();
    const s = createStorage(loadConfig({ PARLEY_DATA_DIR: dir }), new Scratch(scratchRoot(dir)));
    expect(s).toBeInstanceOf(LocalStorage);
    expect((s as LocalStorage).root).toBe(join(dir, "audio"));
  });

  test("S3 when a bucket is configured, objects under audio/<project>/<mode>/<recording>/", () => {
    const dir = makeTempDir();
    const s = createStorage(
      loadConfig({
        PARLEY_DATA_DIR: dir,
        PARLEY_S3_BUCKET: "parley-audio",
        PARLEY_S3_ENDPOINT: "http://127.0.0.1:9000",
        PARLEY_S3_ACCESS_KEY_ID: "k",
        PARLEY_S3_SECRET_ACCESS_KEY: "s",
      }),
      new Scratch(scratchRoot(dir)),
    );
    expect(s).toBeInstanceOf(S3Storage);
    expect(s.kind).toBe("s3");
    expect((s as S3Storage).objectKey("proj_1/live/rec_1/upload-a")).toBe(`${S3_PREFIX}proj_1/live/rec_1/upload-a`);
    expect(() => (s as S3Storage).objectKey("../x")).toThrow();
  });
});
