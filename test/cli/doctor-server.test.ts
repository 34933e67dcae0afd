// Issue 31, item 3: doctor beside a running server reports on that server (its settings,
// engines and models, asked of it through the address its lock file gives), and says so;
// without one it reports on its own environment, and says that (decision 119).
import { expect, test } from "bun:test";
import { join } from "node:path";
import { ensureTestModels } from "../../scripts/test-models/cache";
import { makeTempDir } from "../helpers";
import { freePort, parley, startServer } from "../support/server-process";

type Check = { check: string; ok: boolean; warning?: boolean; detail: string };
const models = ensureTestModels();

test("beside a server started with other settings, doctor reports the server's checks and names it; once it stopped, its own", async () => {
  const dataDir = makeTempDir();
  const shared = { PARLEY_DATA_DIR: dataDir, PARLEY_MODELS_DIR: join(dataDir, "models"), PARLEY_GPU: "off" };
  // The server transcribes with a model of its own; doctor's shell knows nothing of it.
  const server = await startServer({ ...shared, PARLEY_PORT: String(freePort()), PARLEY_WHISPER_MODEL: models.whisper, PARLEY_ASK_PROVIDER: "extractive" });

  const beside = await parley(["doctor", "--json"], shared);
  const checks = JSON.parse(beside.stdout) as Check[];
  expect(checks[0]!.check).toBe("reports on");
  expect(checks[0]!.detail).toStartWith(`the server running on ${dataDir} (pid ${server.proc.pid}, ${server.base}, started at `);
  expect(checks.find((c) => c.check === "transcriber")).toMatchObject({ ok: true });
  expect(checks.find((c) => c.check === "transcriber")!.detail).toStartWith(`${models.whisper} on `);
  expect(checks.find((c) => c.check === "ask provider")).toMatchObject({ ok: true, detail: "extractive: quotes from the transcripts, no model" });
  // What only the server knows: its database answers, and no work failed.
  expect(checks.find((c) => c.check === "database")).toMatchObject({ ok: true });
  expect(checks.find((c) => c.check === "failed recordings")).toMatchObject({ ok: true, detail: "none" });
  // The text report says the same first.
  const text = await parley(["doctor"], shared);
  expect(text.stdout.split("\n")[0]).toMatch(new RegExp(`^ok +reports on +the server running on ${dataDir} \\(pid ${server.proc.pid}`));

  // Nobody else may ask: the checks need doctor's token.
  expect((await fetch(`${server.base}/dashboard/api/system/doctor`)).status).toBe(401);
  expect((await fetch(`${server.base}/dashboard/api/system/doctor`, { headers: { "x-parley-doctor": "0".repeat(64) } })).status).toBe(401);

  server.proc.kill("SIGTERM");
  expect(await server.proc.exited).toBe(0);
  const alone = JSON.parse((await parley(["doctor", "--json"], shared)).stdout) as Check[];
  expect(alone[0]).toEqual({ check: "reports on", ok: true, detail: `this shell's settings and environment: no server runs on ${dataDir}` });
  expect(alone.find((c) => c.check === "transcriber")).toMatchObject({
    ok: false,
    detail: "whisper-base.en is not installed: npm run parley -- models pull whisper-base.en",
  });
});
