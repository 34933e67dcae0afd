// Compiles the single executable dist/parley (`npm run build`).
// It inlines the migrations and embeds sqlite-vec's library by replacing src/db/bundled.ts.
import { readMigrations, MIGRATIONS_DIR } from "../src/db/migrate";

const vecLibrary = require.resolve("sqlite-vec-linux-x64/vec0.so");
const outfile = process.argv[2] ?? "dist/parley";

const result = await Bun.build({
  entrypoints: ["src/cli.ts"],
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
