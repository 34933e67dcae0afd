import { beforeAll, describe, expect, test } from "bun:test";
import { HashingTestEmbedder } from "../../src/engines/embedder.test-double";
import { issueCredential } from "../../src/http/credentials";
import { deleteRecordingRow } from "../../src/modules/recordings/store";
import { makeTenant, makeTestApp } from "../helpers";
import { BUDGET, DOCTOR, HIKING, seedTranscript } from "./search-corpus";

let t: Awaited<ReturnType<typeof makeTestApp>>;
let acme: ReturnType<typeof makeTenant>;
let other: ReturnType<typeof makeTenant>;
let ada: string;
let bob: string;
const recs: Record<string, string> = {};

const search = (body: unknown, key = acme.test) => t.call("POST", "/v1/recordings/search", { key, body });
const tenantOf = (x: ReturnType<typeof makeTenant>, mode: "test" | "live" = "test") => ({ projectId: x.project.id, mode });

beforeAll(async () => {
  t = await makeTestApp({ engines: { embedder: new HashingTestEmbedder() } });
  acme = makeTenant(t.deps);
  other = makeTenant(t.deps);
  ada = (await t.call("POST", "/v1/end-users", { key: acme.test, body: { name: "Ada" } })).body.id;
  bob = (await t.call("POST", "/v1/end-users", { key: acme.test, body: { name: "Bob" } })).body.id;
  const tenant = tenantOf(acme);
  recs.budget = seedTranscript(t.deps, tenant, { endUserId: ada, recordedAt: "2026-01-10T09:00:00.000Z", lines: BUDGET }).recordingId;
  recs.doctor = seedTranscript(t.deps, tenant, { endUserId: ada, recordedAt: "2026-01-12T09:00:00.000Z", lines: DOCTOR }).recordingId;
  recs.hiking = seedTranscript(t.deps, tenant, { endUserId: ada, recordedAt: "2026-01-14T09:00:00.000Z", lines: HIKING }).recordingId;
  recs.bobBudget = seedTranscript(t.deps, tenant, { endUserId: bob, recordedAt: "2026-01-10T09:00:00.000Z", lines: BUDGET }).recordingId;
  await t.deps.queue.drain();
});

describe("search: relevance", () => {
  test.each([
    ["what is the marketing budget for next quarter", "budget", 12_000],
    ["blood pressure medication", "doctor", 0],
    ["what should I bring for the hike in the mountains", "hiking", 0],
  ])("%s -> %s first", async (query, recording, startMs) => {
    const r = await search({ query, end_user_id: ada });
    expect(r.status).toBe(200);
    expect(r.body.results[0].recording_id).toBe(recs[recording]!);
    expect(r.body.results[0].start_ms).toBeLessThanOrEqual(startMs);
    const scores = r.body.results.map((x: any) => x.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
  });

  test("each result has exactly the fields of spec 2.10", async () => {
    const [first] = (await search({ query: "launch date vendor", end_user_id: ada })).body.results;
    expect(Object.keys(first).sort()).toEqual([
      "chunk_id",
      "chunk_text",
      "end_ms",
      "recorded_at",
      "recording_id",
      "score",
      "speaker",
      "start_ms",
      "transcription_id",
    ]);
    expect(first.chunk_id).toMatch(/^chk_/);
    expect(first.transcription_id).toMatch(/^txn_/);
    expect(first.chunk_text).toContain("vendor is late");
    expect(first.recorded_at).toBe("2026-01-10T09:00:00.000Z");
    expect(first.end_ms).toBeGreaterThan(first.start_ms);
  });

  test("limit defaults to 8 and caps the results", async () => {
    expect((await search({ query: "the", end_user_id: ada, limit: 2 })).body.results).toHaveLength(2);
    const cy = (await t.call("POST", "/v1/end-users", { key: acme.test, body: { name: "Cy" } })).body.id;
    for (let i = 0; i < 12; i++)
      seedTranscript(t.deps, tenantOf(acme), { endUserId: cy, recordedAt: null, lines: [[0, 5, "SPEAKER_1", `Standup number ${i} about the roadmap.`]] });
    await t.deps.queue.drain();
    expect((await search({ query: "roadmap", end_user_id: cy, limit: 50 })).body.results).toHaveLength(12);
    expect((await search({ query: "roadmap", end_user_id: cy })).body.results).toHaveLength(8);
  });

  test("filters: recording_ids, recorded_after (inclusive), recorded_before (exclusive)", async () => {
    const only = await search({ query: "budget hiking", end_user_id: ada, recording_ids: [recs.hiking] });
    expect(new Set(only.body.results.map((x: any) => x.recording_id))).toEqual(new Set([recs.hiking]));
    const after = await search({ query: "budget blood hiking", end_user_id: ada, recorded_after: "2026-01-12T09:00:00Z" });
    expect(new Set(after.body.results.map((x: any) => x.recording_id))).toEqual(new Set([recs.doctor, recs.hiking]));
    const before = await search({ query: "budget blood hiking", end_user_id: ada, recorded_before: "2026-01-12T09:00:00Z" });
    expect(new Set(before.body.results.map((x: any) => x.recording_id))).toEqual(new Set([recs.budget]));
    expect((await search({ query: "budget", end_user_id: ada, recording_ids: [] })).body.results).toEqual([]);
  });

  test("a date filter leaves out recordings without recorded_at, on the vector side as on the keyword side", async () => {
    const undated = seedTranscript(t.deps, tenantOf(acme), {
      endUserId: ada,
      recordedAt: null,
      lines: [[0, 5, "SPEAKER_1", "The quokkas escaped from the enclosure."]],
    }).recordingId;
    await t.deps.queue.drain();
    const ids = async (body: object) => (await search({ query: "quokkas escaped", end_user_id: ada, ...body })).body.results.map((x: any) => x.recording_id);
    expect(await ids({})).toContain(undated);
    expect(await ids({ recorded_before: "2100-01-01T00:00:00Z" })).not.toContain(undated);
    expect(await ids({ recorded_after: "2000-01-01T00:00:00Z" })).not.toContain(undated);
  });

  test("a query of punctuation only finds nothing by keyword but still answers", async () => {
    const r = await search({ query: '"*) OR NEAR(', end_user_id: ada });
    expect(r.status).toBe(200);
  });
});

describe("search: errors", () => {
  test.each([
    [{ end_user_id: "eu_x" }, "query"],
    [{ query: "", end_user_id: "eu_x" }, "query"],
    [{ query: "x".repeat(1001), end_user_id: "eu_x" }, "query"],
    [{ query: "x", end_user_id: "eu_x", limit: 0 }, "limit"],
    [{ query: "x", end_user_id: "eu_x", limit: 51 }, "limit"],
    [{ query: "x", end_user_id: "eu_x", recorded_after: "yesterday" }, "recorded_after"],
    [{ query: "x" }, "end_user_id"],
  ])("%j is 422 naming %s", async (body, param) => {
    const r = await search(body);
    expect(r.status).toBe(422);
    expect(r.body.error).toMatchObject({ code: "validation_error", param });
  });

  test("an end user of another project is 404", async () => {
    const r = await search({ query: "budget", end_user_id: ada }, other.test);
    expect(r.status).toBe(404);
    expect(r.body.error.code).toBe("resource_not_found");
  });

  test("no credential is 401", async () => {
    expect((await search({ query: "x", end_user_id: ada }, null as unknown as string)).status).toBe(401);
  });
});

describe("search: security", () => {
  test("restricted key needs recordings:read", async () => {
    expect((await search({ query: "budget", end_user_id: ada }, acme.key("test", { scopes: ["ask:read"] }))).status).toBe(403);
    expect((await search({ query: "budget", end_user_id: ada }, acme.key("test", { scopes: ["recordings:read"] }))).status).toBe(200);
  });

  test("an end-user-scoped key searches its own end user, without naming it, and not another", async () => {
    const key = acme.key("test", { endUserId: bob });
    const own = await search({ query: "marketing budget" }, key);
    expect(own.status).toBe(200);
    expect(new Set(own.body.results.map((x: any) => x.recording_id))).toEqual(new Set([recs.bobBudget]));
    const theirs = await search({ query: "budget", end_user_id: ada }, key);
    expect(theirs.status).toBe(403);
  });

  test("one end user's search never returns another's chunks", async () => {
    const r = await search({ query: "marketing budget", end_user_id: ada });
    expect(r.body.results.every((x: any) => x.recording_id !== recs.bobBudget)).toBe(true);
  });

  test("live mode does not see test data", async () => {
    const r = await search({ query: "budget", end_user_id: ada }, acme.live);
    expect(r.status).toBe(404);
  });

  test("a device token cannot search", async () => {
    const { token } = issueCredential(t.deps.db, { ...tenantOf(acme), kind: "device", endUserId: ada, deviceId: "dev_x", now: t.clock.now() });
    expect((await search({ query: "budget", end_user_id: ada }, token)).status).toBe(403);
  });
});

describe("search: index lifecycle", () => {
  const count = (sql: string) => (t.deps.db.query(sql).get() as { n: number }).n;

  test("re-transcribing a recording replaces its chunks", async () => {
    const tenant = tenantOf(acme);
    const { recordingId } = seedTranscript(t.deps, tenant, { endUserId: ada, recordedAt: null, lines: [[0, 5, "SPEAKER_1", "first draft about zebras"]] });
    await t.deps.queue.drain();
    expect((await search({ query: "zebras", end_user_id: ada })).body.results).toHaveLength(1);
    seedTranscript(t.deps, tenant, { endUserId: ada, recordedAt: null, recordingId, lines: [[0, 5, "SPEAKER_1", "second take about giraffes"]] });
    await t.deps.queue.drain();
    expect((await search({ query: "zebras", end_user_id: ada })).body.results.filter((x: any) => x.chunk_text.includes("zebras"))).toEqual([]);
    const giraffes = await search({ query: "giraffes", end_user_id: ada });
    expect(giraffes.body.results[0]).toMatchObject({ recording_id: recordingId, recorded_at: null });
  });

  test("deleting a recording removes its chunks from the keyword and vector indexes", async () => {
    const before = { fts: count("SELECT COUNT(*) AS n FROM chunks_fts"), vec: count("SELECT COUNT(*) AS n FROM chunk_vectors") };
    const removed = count(`SELECT COUNT(*) AS n FROM chunks WHERE recording_id = '${recs.hiking}'`);
    expect(removed).toBeGreaterThan(0);
    deleteRecordingRow(t.deps.db, tenantOf(acme), recs.hiking!);
    expect(count("SELECT COUNT(*) AS n FROM chunk_vectors")).toBe(before.vec - removed);
    expect(count("SELECT COUNT(*) AS n FROM chunks_fts")).toBe(before.fts - removed);
    expect((await search({ query: "hiking mountains boots", end_user_id: ada })).body.results.every((x: any) => x.recording_id !== recs.hiking)).toBe(true);
  });

  test("a new embedding model with another dimension re-indexes in the background; search keeps answering", async () => {
    t.deps.engines.embedder = new HashingTestEmbedder(96, "test-hashing-96");
    // Before the check has run, the index no longer matches the model: keywords only, no crash.
    expect((await search({ query: "blood pressure", end_user_id: ada })).body.results[0].recording_id).toBe(recs.doctor);
    await t.runTask("search-check-index");
    expect(count("SELECT COUNT(*) AS n FROM chunk_vectors")).toBe(0);
    await t.deps.queue.drain();
    expect(count("SELECT COUNT(*) AS n FROM chunk_vectors")).toBe(count("SELECT COUNT(*) AS n FROM chunks"));
    expect(t.deps.db.query("SELECT model, dimension FROM search_index").get()).toEqual({ model: "test-hashing-96", dimension: 96 });
    // The bits the quantized scan reads were rebuilt with the floats (decision 066).
    expect(count("SELECT COUNT(*) AS n FROM chunk_vectors WHERE embedding_bits = vec_quantize_binary(embedding)")).toBe(
      count("SELECT COUNT(*) AS n FROM chunks"),
    );
    expect((await search({ query: "blood pressure", end_user_id: ada })).body.results[0].recording_id).toBe(recs.doctor);
  });
});
