import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { ensureTestModels } from "../../scripts/test-models/cache";
import { CARRIED_NATIVE_WHISPER, locateNativeWhisper, openNativeWhisper } from "../../src/engines/whisper-native";
import { cpuFingerprint, NATIVE_WHISPER, nativeWhisperStatus } from "../../src/engines/whisper-native-build";
import { CARRIED_PORTABLE_WHISPER } from "../../src/engines/whisper-prebuilt";
import { WhisperTranscriber } from "../../src/engines/whisper-transcriber";
import { RuntimeFiles } from "../../src/runtime/files";
import { makeTempDir } from "../helpers";

const sha256 = (path: string) => createHash("sha256").update(readFileSync(path)).digest("hex");
const portable = createRequire(import.meta.url).resolve("@fugood/node-whisper-linux-x64/index.node");

/** A bundle as scripts/build.ts makes it, with the embedded files read from where they lie in the checkout. */
function bundle(files: Record<string, string>, whisperNativeCpu: string | null = null) {
  return {
    version: "9.9.9-test",
    files: Object.fromEntries(Object.entries(files).map(([name, embedded]) => [name, { embedded, sha256: sha256(embedded) }])),
    whisperNativeCpu,
  };
}

describe("the runtime folder of a compiled executable (decision 090)", () => {
  test("a checkout carries nothing: every lookup is null and nothing is written", () => {
    const dataDir = makeTempDir();
    const runtime = new RuntimeFiles(dataDir, null);
    expect(runtime.carried).toBe(false);
    expect(runtime.file("vec0.so")).toBeNull();
    expect(existsSync(join(dataDir, "runtime"))).toBe(false);
  });

  test("a file is written once under runtime/<version>/, private, and rewritten when altered", () => {
    const source = join(makeTempDir(), "lib.so");
    writeFileSync(source, "library bytes");
    const dataDir = makeTempDir();
    const target = join(dataDir, "runtime", "9.9.9-test", "libs", "lib.so");
    const runtime = new RuntimeFiles(dataDir, bundle({ "libs/lib.so": source }));
    expect(runtime.file("libs/lib.so")).toBe(target);
    expect(readFileSync(target, "utf8")).toBe("library bytes");
    expect(statSync(target).mode & 0o777).toBe(0o500);
    expect(statSync(join(dataDir, "runtime", "9.9.9-test")).mode & 0o777).toBe(0o700);
    expect(readdirSync(join(dataDir, "runtime", "9.9.9-test", "libs"))).toEqual(["lib.so"]); // no temp file left

    // Damaged on disk (a later process checks the hash on its first use): written anew.
    writeFileSync(target, "tampered", { mode: 0o600 });
    expect(new RuntimeFiles(dataDir, bundle({ "libs/lib.so": source })).file("libs/lib.so")).toBe(target);
    expect(readFileSync(target, "utf8")).toBe("library bytes");
  });

  test("an embedded copy that does not match its hash is refused, not loaded", () => {
    const source = join(makeTempDir(), "lib.so");
    writeFileSync(source, "library bytes");
    const broken = bundle({ "lib.so": source });
    writeFileSync(source, "other bytes");
    expect(() => new RuntimeFiles(makeTempDir(), broken).file("lib.so")).toThrow("does not match its hash");
  });

  test("folder writes out every file under a prefix, side by side", () => {
    const dir = makeTempDir();
    for (const f of ["a.node", "b.so", "c.txt"]) writeFileSync(join(dir, f), f);
    const dataDir = makeTempDir();
    const runtime = new RuntimeFiles(dataDir, bundle({ "ort/a.node": join(dir, "a.node"), "ort/b.so": join(dir, "b.so"), "other/c.txt": join(dir, "c.txt") }));
    const folder = runtime.folder("ort")!;
    expect(readdirSync(folder).sort()).toEqual(["a.node", "b.so"]);
    expect(runtime.folder("none")).toBeNull();
  });
});

describe("whisper.cpp from the runtime folder", () => {
  const models = ensureTestModels();

  test("Parley's addon is used only on the CPU it was built for; elsewhere the carried portable build runs", async () => {
    const files = { [CARRIED_PORTABLE_WHISPER]: portable, ...(nativeWhisperStatus().usable ? { [CARRIED_NATIVE_WHISPER]: NATIVE_WHISPER.addon } : {}) };
    const elsewhere = new RuntimeFiles(makeTempDir(), bundle(files, "0000000000000000"));
    expect(locateNativeWhisper(elsewhere)).toMatchObject({ usable: false, reason: expect.stringContaining("other features") });
    expect(await openNativeWhisper(models.whisper, elsewhere)).toBeNull();
    const t = new WhisperTranscriber({ model: "tiny", path: models.whisper, gpu: "off", runtime: elsewhere });
    const result = await t.transcribe(new Float32Array(16_000), { language: "en" });
    expect(Array.isArray(result.segments)).toBe(true);
    expect(await t.backend()).toBe("cpu");
    expect(existsSync(join(elsewhere.dir!, CARRIED_PORTABLE_WHISPER))).toBe(true);

    const without = new RuntimeFiles(makeTempDir(), bundle({ [CARRIED_PORTABLE_WHISPER]: portable }, null));
    expect(locateNativeWhisper(without)).toMatchObject({ usable: false, reason: expect.stringContaining("not carried") });
  });

  test.skipIf(!nativeWhisperStatus().usable)("on its own CPU the carried addon loads from the runtime folder", async () => {
    const here = new RuntimeFiles(makeTempDir(), bundle({ [CARRIED_NATIVE_WHISPER]: NATIVE_WHISPER.addon }, cpuFingerprint()));
    const location = locateNativeWhisper(here);
    expect(location).toEqual({ usable: true, addon: join(here.dir!, CARRIED_NATIVE_WHISPER) });
    const runner = await openNativeWhisper(models.whisper, here);
    expect(runner?.backend).toBe("cpu-native");
  });
});
