import { describe, expect, test } from "bun:test";
import { copyFileSync, cpSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cachedTinyEmbedder, TINY_EMBEDDER_DIMENSION } from "../../scripts/test-models/onnx-embedder";
import { Database } from "bun:sqlite";
import { registerBackgroundWork } from "../../src/background";
import { buildDeps, databasePath } from "../../src/boot";
import { loadConfig } from "../../src/config";
import { createEngines } from "../../src/engines";
import { HashingTestEmbedder } from "../../src/engines/embedder.test-double";
import { MissingModelError } from "../../src/engines/missing-model";
import { TransformersEmbedder } from "../../src/engines/transformers-embedder";
import { createLogger } from "../../src/log";
import { serve } from "../../src/main";
import { makeTempDir, makeTenant, makeTestApp, waitFor } from "../helpers";
import { BUDGET, DOCTOR, seedTranscript } from "../modules/search-corpus";

const modelsDir = cachedTinyEmbedder();
const embedder = new TransformersEmbedder(join(modelsDir, "tiny-embedder"), "tiny-embedder");

describe("transformers.js embedder on a generated ONNX model", () => {
  test("dimension comes from config.json; vectors are that long, normalised and deterministic", async () => {
    expect(await embedder.dimension()).toBe(TINY_EMBEDDER_DIMENSION);
    const [a, b, again] = await embedder.embed(["the marketing budget", "blood pressure", "the marketing budget"]);
    expect(a).toHaveLength(TINY_EMBEDDER_DIMENSION);
    expect(Math.hypot(...a!)).toBeCloseTo(1, 4);
    expect([...again!]).toEqual([...a!]);
    expect([...b!]).not.toEqual([...a!]);
  });

  test("more texts than one batch keep their order; an empty list is empty", async () => {
    const texts = Array.from({ length: 37 }, (_, i) => `text number ${i} about ${i % 2 ? "hiking" : "budget"}`);
    const all = await embedder.embed(texts);
    expect(all).toHaveLength(37);
    expect([...all[30]!]).toEqual([...(await embedder.embed([texts[30]!]))[0]!]);
    expect(await embedder.embed([])).toEqual([]);
  });

  test("the quantized file is preferred when present", async () => {
    const dir = join(makeTempDir(), "q-embedder");
    cpSync(join(modelsDir, "tiny-embedder"), dir, { recursive: true });
    copyFileSync(join(dir, "onnx", "model.onnx"), join(dir, "onnx", "model_quantized.onnx"));
    writeFileSync(join(dir, "onnx", "model.onnx"), "not an onnx file"); // loading this one would fail
    const quantized = new TransformersEmbedder(dir, "q-embedder");
    expect(await quantized.embed(["budget"])).toHaveLength(1);
  });

  test("a missing model is a MissingModelError naming the install command, for dimension and embed", async () => {
    const missing = new TransformersEmbedder(join(makeTempDir(), "all-minilm-l6-v2"), "all-minilm-l6-v2");
    await expect(missing.dimension()).rejects.toBeInstanceOf(MissingModelError);
    await expect(missing.embed(["x"])).rejects.toThrow("models pull all-minilm-l6-v2");
  });
});

describe("search with the real embedder engine (createEngines)", () => {
  test("the index adopts the model's dimension, embeds every chunk and answers", async () => {
    const t = await makeTestApp({ env: { PARLEY_MODELS_DIR: modelsDir, PARLEY_EMBEDDING_MODEL: "tiny-embedder" } });
    const acme = makeTenant(t.deps);
    const eu = (await t.call("POST", "/v1/end-users", { key: acme.test, body: {} })).body.id;
    const tenant = { projectId: acme.project.id, mode: "test" as const };
    const budget = seedTranscript(t.deps, tenant, { endUserId: eu, recordedAt: null, lines: BUDGET }).recordingId;
    seedTranscript(t.deps, tenant, { endUserId: eu, recordedAt: null, lines: DOCTOR });
    await t.deps.queue.drain();
    const count = (sql: string) => (t.deps.db.query(sql).get() as { n: number }).n;
    expect(t.deps.db.query("SELECT model, dimension FROM search_index").get()).toEqual({ model: "tiny-embedder", dimension: TINY_EMBEDDER_DIMENSION });
    expect(count("SELECT COUNT(*) AS n FROM chunk_vectors")).toBe(count("SELECT COUNT(*) AS n FROM chunks"));
    const r = await t.call("POST", "/v1/recordings/search", { key: acme.test, body: { query: "marketing budget", end_user_id: eu } });
    expect(r.status).toBe(200);
    expect(r.body.results[0].recording_id).toBe(budget);
  });

  test("without a model installed, transcripts are still indexed for keywords and the re-index waits", async () => {
    const t = await makeTestApp({ env: { PARLEY_EMBEDDING_MODEL: "all-minilm-l6-v2" } });
    const acme = makeTenant(t.deps);
    const eu = (await t.call("POST", "/v1/end-users", { key: acme.test, body: {} })).body.id;
    const budget = seedTranscript(t.deps, { projectId: acme.project.id, mode: "test" }, { endUserId: eu, recordedAt: null, lines: BUDGET }).recordingId;
    await t.deps.queue.drain();
    await t.runTask("search-check-index");
    const r = await t.call("POST", "/v1/recordings/search", { key: acme.test, body: { query: "marketing budget", end_user_id: eu } });
    expect(r.status).toBe(200);
    expect(r.body.results[0].recording_id).toBe(budget);
    expect(t.deps.db.query("SELECT state FROM jobs WHERE type = 'search.index_transcription'").get()).toEqual({ state: "done" });
  });
});

describe("serve checks the index against the embedder at start", () => {
  test("an index built with another model is rebuilt and re-embedded in the background right after boot", async () => {
    const config = loadConfig({
      PARLEY_DATA_DIR: makeTempDir(),
      PARLEY_MODELS_DIR: modelsDir,
      PARLEY_EMBEDDING_MODEL: "tiny-embedder",
      PARLEY_PORT: "0",
      PARLEY_LOG_LEVEL: "silent",
    });
    // A previous run indexed with another model (384 dimensions).
    const log = createLogger("silent");
    const before = buildDeps(config, { log, engines: { ...createEngines(config, log), embedder: new HashingTestEmbedder() } });
    registerBackgroundWork(before);
    seedTranscript(before, { projectId: makeTenant(before).project.id, mode: "test" }, { endUserId: null, recordedAt: null, lines: BUDGET });
    await before.queue.drain();
    before.db.close();

    const server = await serve(config);
    const db = new Database(databasePath(config), { readonly: true });
    const state = () =>
      db.query("SELECT model, dimension, (SELECT COUNT(*) FROM chunks WHERE embedded_generation < generation) AS pending FROM search_index").get();
    try {
      // The periodic check runs every 5 minutes; only the one at start can do this within the test's
      // time (seconds on a quiet machine; the wait allows a busy one more).
      await waitFor(
        "the index rebuilt with the new model",
        () => {
          const now = state() as { model: string; pending: number };
          return now.model === "tiny-embedder" && now.pending === 0;
        },
        25_000,
      );
      expect(state()).toEqual({ model: "tiny-embedder", dimension: TINY_EMBEDDER_DIMENSION, pending: 0 });
    } finally {
      db.close();
      await server.stop();
    }
  });
});
