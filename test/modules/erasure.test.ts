import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { databasePath } from "../../src/boot";
import { checkpointInBackground } from "../../src/db/checkpointer";
import { HashingTestEmbedder } from "../../src/engines/embedder.test-double";
import { ScriptedLlm } from "../../src/engines/llm.test-double";
import { ScriptedTranscriber } from "../../src/engines/transcriber.test-double";
import { createLogger } from "../../src/log";
import { fanOutEvents, leaseDelivery, recordAttempt } from "../../src/modules/webhooks/delivery-store";
import type { DeliveryRow } from "../../src/modules/webhooks/store";
import { makeTenant, makeTestApp } from "../helpers";
import { concat, eventsOf, silence, voiced, wav } from "./pipeline-fixtures";
import { put, sha256 } from "./recordings-support";

/**
 * Words no stemmer changes and no other indexed word shares a first letter with: FTS5 keeps
 * its index words lowercased and prefix-compressed, so each must stand whole in the index.
 */
const MARKER = "Zorbleflax Quimberwomp";
const PERSON = { name: "Yvonne Xandrophel", email: "yxandrophel@example.org", external_id: "client-Jubblequist", metadata: { file: "Kwertyvane" } };

const MARKER_WORDS = [MARKER, ...MARKER.split(" ")];
const PERSON_WORDS = [PERSON.name, "Xandrophel", PERSON.email, "Jubblequist", "Kwertyvane"];

/** Every file under the data dir, read as raw bytes, that holds one of the words as UTF-8, as written or lowercased. */
function filesHolding(dir: string, words: string[]): string[] {
  const forms = words.flatMap((w) => [w, w.toLowerCase()]);
  const found: string[] = [];
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    const bytes = readFileSync(path);
    for (const form of new Set(forms)) if (bytes.includes(Buffer.from(form, "utf8"))) found.push(`${path}: ${form}`);
  }
  return found;
}

/** The real pipeline on scripted models: every transcribed window says the marker; summaries quote their input. */
async function erasureApp() {
  const transcriber = new ScriptedTranscriber({
    segments: (pcm) => [{ start: 0, end: pcm.length / 16_000, text: ` The client said ${MARKER} twice.`, confidence: 0.9 }],
  });
  const t = await makeTestApp({
    engines: { transcriber, llm: new ScriptedLlm(), embedder: new HashingTestEmbedder() },
    env: { PARLEY_ASK_PROVIDER: "extractive" },
  });
  const tenant = makeTenant(t.deps);
  // Pending deliveries: an endpoint nobody answers for, fanned out to but never attempted here.
  expect((await t.call("POST", "/v1/webhooks", { key: tenant.test, body: { url: "https://10.255.255.1/hook", events: ["*"] } })).status).toBe(201);
  const endUser = async (body: object, idempotencyKey?: string) => {
    const headers: Record<string, string> = idempotencyKey ? { "idempotency-key": idempotencyKey } : {};
    return (await t.call("POST", "/v1/end-users", { key: tenant.test, body, headers })).body;
  };
  return { t, tenant, endUser };
}

/** A recording uploaded (with an Idempotency-Key), transcribed, summarised and indexed by the real jobs. */
async function processedRecording(app: Awaited<ReturnType<typeof erasureApp>>, endUserId: string, body: object = {}) {
  const { t, tenant } = app;
  const created = await t.call("POST", "/v1/recordings", {
    key: tenant.test,
    body: { end_user_id: endUserId, ...body },
    headers: { "idempotency-key": `rec-${endUserId}` },
  });
  expect(created.status).toBe(201);
  const bytes = wav(concat(voiced(2), silence(1), voiced(2)));
  await put(t, tenant.test, created.body.id, bytes);
  const completion = { sha256: sha256(bytes), file_size_bytes: bytes.length };
  expect((await t.call("POST", `/v1/recordings/${created.body.id}/upload-complete`, { key: tenant.test, body: completion })).status).toBe(425);
  await t.deps.queue.drain();
  return created.body.id as string;
}

describe("erasure: deleting a recording erases its content everywhere Parley keeps it", () => {
  test("after DELETE and the jobs, the transcript's words are in no file of the data dir; ids and the deletion event remain", async () => {
    const app = await erasureApp();
    const { t, tenant } = app;
    // As `serve` runs: checkpoints on a worker thread, which also empties the WAL on request.
    const checkpointer = checkpointInBackground(t.deps, databasePath(t.deps.config), createLogger("silent"));
    const eu = (await app.endUser({ name: "Ada" })).id;
    const rec = await processedRecording(app, eu, { name: `Visit ${MARKER}`, metadata: { note: MARKER } });

    const [txn] = (await t.call("GET", `/v1/transcriptions?recording_id=${rec}`, { key: tenant.test })).body.data;
    expect(txn).toMatchObject({ status: "completed", text: expect.stringContaining(MARKER) });
    const [summary] = (await t.call("GET", `/v1/summaries?transcription_id=${txn.id}`, { key: tenant.test })).body.data;
    expect(summary).toMatchObject({ status: "completed", text: expect.stringContaining("Zorbleflax") });
    const rerun = await t.call("POST", "/v1/summaries", { key: tenant.test, body: { transcription_id: txn.id }, headers: { "idempotency-key": "sum-1" } });
    expect(rerun.status).toBe(202);
    await t.deps.queue.drain();
    // Searchable by keyword and by vector.
    const search = await t.call("POST", "/v1/recordings/search", { key: tenant.test, body: { query: "zorbleflax", end_user_id: eu } });
    expect(search.body.results[0]).toMatchObject({ recording_id: rec, chunk_text: expect.stringContaining(MARKER) });
    // Asked about: a session on the recording, and a library session whose answer quotes it.
    const asked = await t.call("POST", "/v1/ask/sessions", {
      key: tenant.test,
      body: { scope: { type: "recording", recording_id: rec }, initial_message: { content: "What did the client say?" } },
    });
    expect(asked.body.message.content).toContain(MARKER);
    const library = await t.call("POST", "/v1/ask/sessions", {
      key: tenant.test,
      body: { scope: { type: "library" }, end_user_id: eu, initial_message: { content: "What about Zorbleflax?" } },
    });
    expect(library.body.message.parts).toContainEqual(expect.objectContaining({ type: "citation", recording_id: rec, start_ms: expect.any(Number) }));
    // Every event so far waits for delivery.
    fanOutEvents(t.deps.db, t.clock.now());
    const pending = () => t.deps.db.query<{ n: number }, []>("SELECT count(*) AS n FROM webhook_deliveries WHERE status = 'pending'").get()!.n;
    expect(pending()).toBeGreaterThan(5);
    // One was attempted, and its receiver echoed what it was sent into the attempt log.
    const echoed = t.deps.db.query<DeliveryRow, []>("SELECT * FROM webhook_deliveries WHERE event_type = 'transcription.completed'").get()!;
    expect(leaseDelivery(t.deps.db, echoed.id, "test-worker", t.clock.now(), 60_000)).toBe(true);
    const attempt = { attempted_at: t.clock.now().toISOString(), latency_ms: 5, response_status: 500, response_snippet: `bad input: ${MARKER}`, error: null };
    recordAttempt(
      t.deps.db,
      echoed,
      "test-worker",
      { attempt, ok: false, retryDelaysSeconds: [60], disableAfterMs: 86_400_000, streakGapMs: 86_400_000 },
      t.clock.now(),
    );

    const dataDir = t.deps.config.dataDir;
    expect(filesHolding(dataDir, MARKER_WORDS)).not.toEqual([]); // the search below can find what it looks for

    expect((await t.call("DELETE", `/v1/recordings/${rec}`, { key: tenant.test })).status).toBe(204);
    await t.deps.queue.drain();
    fanOutEvents(t.deps.db, t.clock.now());

    expect(filesHolding(dataDir, MARKER_WORDS)).toEqual([]);
    // What stays: ids, statuses and timestamps, the deletion event going out, replays that say what happened.
    const completed = eventsOf(t.deps, "transcription.completed").find((e) => e.data.id === txn.id)!;
    expect(Object.keys(completed.data).sort()).toEqual(["completed_at", "created_at", "id", "recording_id", "status"]);
    expect(eventsOf(t.deps, "recording.deleted").map((e) => e.data.id)).toEqual([rec]);
    expect(pending()).toBeGreaterThan(5);
    const replay = await t.call("POST", "/v1/recordings", {
      key: tenant.test,
      body: { end_user_id: eu, name: `Visit ${MARKER}`, metadata: { note: MARKER } },
      headers: { "idempotency-key": `rec-${eu}` },
    });
    expect([replay.status, replay.body.error.code, replay.headers.get("idempotent-replayed")]).toEqual([404, "not_found", "true"]);
    expect((await t.call("GET", `/v1/ask/sessions/${asked.body.session_id}`, { key: tenant.test })).status).toBe(404);
    const kept = await t.call("GET", `/v1/ask/sessions/${library.body.session_id}`, { key: tenant.test });
    expect(kept.body).toMatchObject({ message_count: 0, last_message_at: null, title: "New chat" });
    checkpointer.stop();
  });
});

describe("erasure: deleting an end user erases the person's own record and keeps its recordings (spec 4.1)", () => {
  test("name, email, metadata and external_id leave the row, the stored replay and every file; the recording stays", async () => {
    const app = await erasureApp();
    const { t, tenant } = app;
    const person = await app.endUser(PERSON, "eu-1");
    const rec = await processedRecording(app, person.id);
    const dataDir = t.deps.config.dataDir;
    expect(filesHolding(dataDir, PERSON_WORDS)).not.toEqual([]);

    expect((await t.call("DELETE", `/v1/end-users/${person.id}`, { key: tenant.test })).status).toBe(204);
    await t.deps.queue.drain();

    expect(filesHolding(dataDir, PERSON_WORDS)).toEqual([]);
    const erased = { id: person.id, external_id: null, name: null, email: null, metadata: {} };
    expect((await t.call("GET", `/v1/end-users/${person.id}`, { key: tenant.test })).body).toMatchObject({ ...erased, deleted_at: expect.any(String) });
    const replay = await t.call("POST", "/v1/end-users", { key: tenant.test, body: PERSON, headers: { "idempotency-key": "eu-1" } });
    expect([replay.status, replay.headers.get("idempotent-replayed")]).toEqual([201, "true"]);
    expect(replay.body).toMatchObject(erased);
    // Retained data: the recording and its transcript.
    expect((await t.call("GET", `/v1/recordings/${rec}`, { key: tenant.test })).body).toMatchObject({ id: rec, end_user_id: person.id });
    expect((await t.call("GET", `/v1/transcriptions?recording_id=${rec}`, { key: tenant.test })).body.data[0].text).toContain(MARKER);
  });
});
