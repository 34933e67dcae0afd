// Builds Parley's whisper.cpp addon (native/whisper) for this machine's CPU: run by
// `npm install` (postinstall) and by `npm run build:whisper`. The whisper.cpp sources come
// from the nodejs-whisper package; cmake, make and a C/C++ compiler do the rest (a few
// minutes on 2 cores, once: an unchanged build is skipped). A machine that cannot build it
// still installs: transcription then runs on the prebuilt portable addon, and `parley doctor`
// says why (decision 046).
// Usage: bun scripts/native-whisper.ts [--cli] [--cuda]   (--cli also builds whisper.cpp's whisper-cli
// and parakeet-cli from the same sources and flags, for the benches; --cuda builds ggml with
// CUDA, nvcc needed, so that Parakeet runs on the GPU: untested on a GPU, decision 199).
// whisper.cpp's whisper-server is always built with the addon: the remote transcriber's tests
// run against it (issue 33).
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { dirname, join } from "node:path";
import { NATIVE_WHISPER, cpuFingerprint, readNativeWhisperStamp, type NativeWhisperStamp } from "../src/engines/whisper-native-build";

const withCli = process.argv.includes("--cli");
const cuda = process.argv.includes("--cuda");
const addonDir = dirname(NATIVE_WHISPER.buildDir);
const whisperSource = join(dirname(require.resolve("nodejs-whisper/package.json")), "cpp", "whisper.cpp");
const nodeApiHeaders = require("node-api-headers").include_dir as string;

function sourceHash(): string {
  const hash = createHash("sha256");
  for (const file of ["addon.c", "parakeet.c", "parley-parakeet.h", "napi-shared.c", "napi-shared.h", "CMakeLists.txt"])
    hash.update(readFileSync(join(addonDir, file)));
  hash.update(readFileSync(join(whisperSource, "CMakeLists.txt")));
  hash.update(require("nodejs-whisper/package.json").version);
  // A CUDA build is another build: asking for one (or no longer) rebuilds.
  if (cuda) hash.update("GGML_CUDA");
  return hash.digest("hex");
}

function run(command: string[], log: string[]): void {
  const result = Bun.spawnSync(command, { stdout: "pipe", stderr: "pipe" });
  log.push(`$ ${command.join(" ")}`, result.stdout.toString(), result.stderr.toString());
  if (result.exitCode !== 0) throw new Error(`${command[0]} ${command[1]} failed (exit ${result.exitCode})`);
}

function haveCmake(): boolean {
  try {
    return Bun.spawnSync(["cmake", "--version"], { stdout: "ignore", stderr: "ignore" }).exitCode === 0;
  } catch {
    return false; // not on PATH
  }
}

function build(): void {
  if (process.env.PARLEY_SKIP_NATIVE_BUILD === "1") return console.log("native whisper build skipped (PARLEY_SKIP_NATIVE_BUILD=1)");
  const stamp: NativeWhisperStamp = { source: sourceHash(), cpu: cpuFingerprint() };
  const built = readNativeWhisperStamp();
  const upToDate = built?.source === stamp.source && built.cpu === stamp.cpu && existsSync(NATIVE_WHISPER.addon);
  if (upToDate && existsSync(NATIVE_WHISPER.server) && (!withCli || (existsSync(NATIVE_WHISPER.cli) && existsSync(NATIVE_WHISPER.parakeetCli))))
    return console.log(`native whisper addon up to date: ${NATIVE_WHISPER.addon}`);

  mkdirSync(NATIVE_WHISPER.buildDir, { recursive: true });
  const log: string[] = [];
  const started = performance.now();
  if (!haveCmake()) throw new Error("cmake is not installed (Debian: apt-get install cmake)");
  try {
    run(
      [
        "cmake",
        "-S",
        addonDir,
        "-B",
        NATIVE_WHISPER.buildDir,
        "-DCMAKE_BUILD_TYPE=Release",
        `-DWHISPER_SOURCE_DIR=${whisperSource}`,
        `-DNODE_API_HEADERS_DIR=${nodeApiHeaders}`,
        // This machine's GPU architecture only (CMake 3.24+): every architecture would take an hour to compile.
        ...(cuda ? ["-DGGML_CUDA=ON", "-DCMAKE_CUDA_ARCHITECTURES=native"] : ["-DGGML_CUDA=OFF"]),
      ],
      log,
    );
    const targets = ["parley_whisper", "whisper-server", ...(withCli ? ["whisper-cli", "parakeet-cli"] : [])];
    run(["cmake", "--build", NATIVE_WHISPER.buildDir, "--parallel", String(availableParallelism()), "--target", ...targets], log);
  } finally {
    writeFileSync(NATIVE_WHISPER.log, log.join("\n"));
  }
  writeFileSync(NATIVE_WHISPER.stamp, JSON.stringify(stamp));
  console.log(`native whisper addon built in ${((performance.now() - started) / 1000).toFixed(0)} s: ${NATIVE_WHISPER.addon}`);
}

try {
  build();
} catch (err) {
  // Never fails the install: the prebuilt addon still transcribes, more slowly.
  console.warn(
    `native whisper addon not built: ${(err as Error).message}; see ${NATIVE_WHISPER.log}. Transcription uses the prebuilt portable addon; run \`npm run build:whisper\` after fixing.`,
  );
}
