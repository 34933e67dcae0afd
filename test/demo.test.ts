import { describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { loadConfig } from "../src/config";
import { demoConsole, formatMissingModels, missingDemoModels } from "../src/demo";
import { createLogger } from "../src/log";
import { modelFilePath } from "../src/model-files/manifest";
import { makeTempDir } from "./helpers";
import { freePort, parley, startServer } from "./support/server-process";

describe("parley demo: the models it needs", () => {
  test("with an empty models folder, all three are missing, each with the command that installs it", () => {
    const config = loadConfig({ PARLEY_DATA_DIR: makeTempDir(), PARLEY_MODELS_DIR: makeTempDir() });
    const missing = missingDemoModels(config);
    expect(missing.map((m) => m.model)).toEqual([config.models.whisper, config.models.llm, config.models.embedding]);
    const notice = formatMissingModels(missing);
    for (const m of missing) expect(notice).toContain(`models pull ${m.model}`);
    expect(notice).toContain("models import PATH");
  });

  test("a model given as a path that does not exist: the notice says to put its file there, not to pull it", () => {
    const own = join(makeTempDir(), "my-llm.gguf");
    const config = loadConfig({ PARLEY_DATA_DIR: makeTempDir(), PARLEY_MODELS_DIR: makeTempDir(), PARLEY_LLM_MODEL: own });
    const notice = formatMissingModels(missingDemoModels(config));
    expect(notice).toContain(`put the model's file at ${own}`);
    expect(notice).not.toContain(`models pull ${own}`);
  });

  test("an installed model drops out of the list; a model given as a path counts when the file exists", () => {
    const modelsDir = makeTempDir();
    const own = join(makeTempDir(), "my-llm.gguf");
    writeFileSync(own, "gguf");
    const config = loadConfig({ PARLEY_DATA_DIR: makeTempDir(), PARLEY_MODELS_DIR: modelsDir, PARLEY_LLM_MODEL: own });
    const whisper = modelFilePath(modelsDir, config.models.whisper);
    mkdirSync(dirname(whisper), { recursive: true });
    writeFileSync(whisper, "ggml");
    expect(missingDemoModels(config).map((m) => m.model)).toEqual([config.models.embedding]);
  });
});

describe("parley demo, run as an operator runs it", () => {
  const demoEnv = (dataDir: string) => ({ PARLEY_DATA_DIR: dataDir, PARLEY_MODELS_DIR: makeTempDir(), PARLEY_PORT: String(freePort()) });
  const count = (dataDir: string, sql: string) => {
    const db = new Database(join(dataDir, "parley.db"), { readonly: true });
    try {
      return (db.query(sql).get() as { n: number }).n;
    } finally {
      db.close();
    }
  };

  test("refused because a server has the data dir, it has created no project and no key", async () => {
    const dataDir = makeTempDir();
    const server = await startServer({
      PARLEY_DATA_DIR: dataDir,
      PARLEY_MODELS_DIR: makeTempDir(),
      PARLEY_PORT: String(freePort()),
      PARLEY_LOG_LEVEL: "silent",
    });
    try {
      const demo = await parley(["demo", "--devices", "1", "--duration", "1"], demoEnv(dataDir));
      expect(demo.code).toBe(1);
      expect(demo.stderr).toContain("is in use by another parley server");
      expect(demo.stdout).not.toContain("sk_test_");
      expect(count(dataDir, "SELECT count(*) AS n FROM projects WHERE name = 'demo'")).toBe(0);
      expect(count(dataDir, "SELECT count(*) AS n FROM credentials WHERE name = 'parley demo'")).toBe(0);
    } finally {
      server.proc.kill("SIGTERM");
      await server.proc.exited;
    }
  }, 60_000);

  test("a second run uses the first one's simulated wearers and devices; the console is plain lines, each warning once", async () => {
    const dataDir = makeTempDir();
    const runs = [];
    for (let i = 0; i < 2; i++) runs.push(await parley(["demo", "--devices", "3", "--duration", "6"], demoEnv(dataDir)));
    for (const run of runs) expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: "" });
    expect(count(dataDir, "SELECT count(*) AS n FROM end_users WHERE name LIKE 'Simulated wearer %'")).toBe(3);
    expect(count(dataDir, "SELECT count(*) AS n FROM devices WHERE serial_number LIKE 'SIM-%'")).toBe(3);

    // Without models every upload fails alike: the console says so at most once per run (how
    // many uploads a run gets through is the machine's pace; demoConsole's test below is exact).
    const out = runs[0]!.stdout;
    expect(out.split("\n").filter((l) => l.startsWith("{"))).toEqual([]);
    expect(out).toContain("parley listening (url http://127.0.0.1:");
    // The wearers stream (the default): the console says where to watch each transcript grow.
    expect(out).toMatch(/^streaming [a-z-]+ \(\d+ s\) as (rec_\w+): http:\/\/127\.0\.0\.1:\d+\/dashboard#\/recordings\/\1$/m);
    expect(count(dataDir, "SELECT count(*) AS n FROM transcriptions WHERE status = 'failed'")).toBeGreaterThanOrEqual(1);
    for (const run of runs) expect(run.stdout.match(/^warning: transcription failed: /gm)?.length ?? 0).toBeLessThanOrEqual(1);
    expect(out).toContain("npm run parley -- recordings reprocess --failed"); // as parley runs in a checkout
  }, 90_000);
});

describe("the demo's console", () => {
  test("plain lines; a warning repeated with other ids shows once; secrets are masked", () => {
    const lines: string[] = [];
    const log = createLogger(
      "info",
      demoConsole((line) => lines.push(line)),
    );
    log.info("parley listening", { url: "http://127.0.0.1:8080", tls: "off" });
    const failed = (id: string) => log.warn("transcription failed", { transcription_id: id, error: "The whisper model whisper-base.en is not installed." });
    failed("txn_1");
    failed("txn_2");
    log.warn("transcription failed", { transcription_id: "txn_3", error: "Another reason." });
    log.error("unhandled error", { error: "Bearer sk_test_abcdefghijklmnop leaked" });
    log.debug("not at info level");
    expect(lines).toEqual([
      "parley listening (url http://127.0.0.1:8080, tls off)",
      "warning: transcription failed: The whisper model whisper-base.en is not installed. (transcription_id txn_1) (repeats are not shown)",
      "warning: transcription failed: Another reason. (transcription_id txn_3) (repeats are not shown)",
      "error: unhandled error: Bearer sk_[redacted] leaked (repeats are not shown)",
    ]);
  });
});
