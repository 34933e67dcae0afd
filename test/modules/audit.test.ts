import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { HashingTestEmbedder } from "../../src/engines/embedder.test-double";
import { ScriptedLlm } from "../../src/engines/llm.test-double";
import { ScriptedTranscriber } from "../../src/engines/transcriber.test-double";
import { createApiKey, revokeApiKey } from "../../src/modules/keys/service";
import { makeTenant, makeTestApp } from "../helpers";
import { concat, seedRecording, silence, voiced, wav } from "./pipeline-fixtures";

const CLI = join(import.meta.dir, "..", "..", "src", "cli.ts");

async function auditVerify(dataDir: string) {
  const proc = Bun.spawn([process.execPath, CLI, "audit", "verify"], {
    env: { PATH: process.env.PATH ?? "", PARLEY_DATA_DIR: dataDir, PARLEY_LOG_LEVEL: "silent" },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { stdout, stderr, code };
}

/** A project with one transcribed, summarised and indexed recording, and a restricted reader key whose id the test knows. */
async function auditedApp() {
  const transcriber = new ScriptedTranscriber({
    segments: (pcm) => [{ start: 0, end: pcm.length / 16_000, text: " The patient reported a headache since Monday.", confidence: 0.9 }],
  });
  const t = await makeTestApp({
    engines: { transcriber, llm: new ScriptedLlm(), embedder: new HashingTestEmbedder() },
    env: { PARLEY_ASK_PROVIDER: "extractive" },
  });
  const tenant = makeTenant(t.deps, `audit-${crypto.randomUUID().slice(0, 8)}`);
  const endUser = (await t.call("POST", "/v1/end-users", { key: tenant.test, body: { name: "Patient" } })).body.id as string;
  const recording = await seedRecording(t.deps, { projectId: tenant.project.id, mode: "test" }, wav(concat(voiced(2), silence(1), voiced(2))), {
    endUserId: endUser,
  });
  const transcription = (await t.call("POST", "/v1/transcriptions", { key: tenant.test, body: { recording_id: recording } })).body.id as string;
  await t.deps.queue.drain();
  const reader = createApiKey(
    t.deps.db,
    { project: tenant.project.name, mode: "test", scopes: ["recordings:read", "transcriptions:read", "summaries:read", "ask:write", "ask:read"] },
    t.clock.now(),
  );
  return { t, tenant, endUser, recording, transcription, reader };
}

const eventsFor = async (t: Awaited<ReturnType<typeof makeTestApp>>, key: string, query: string) => {
  const r = await t.call("GET", `/v1/audit-events?${query}`, { key });
  expect(r.status).toBe(200);
  return r.body.data as any[];
};

describe("access audit log", () => {
  test("each read of content is recorded with its actor, request id and resources; the audit log lists and filters them", async () => {
    const { t, tenant, endUser, recording, transcription, reader } = await auditedApp();

    const read = await t.call("GET", `/v1/transcriptions/${transcription}`, { key: reader.key });
    expect(read.status).toBe(200);
    const [row] = await eventsFor(t, tenant.test, `resource_id=${transcription}&action=transcription.read`);
    expect(row).toMatchObject({
      action: "transcription.read",
      actor: { type: "restricted", id: reader.id, admin_email: null, device_id: null },
      resource_ids: [transcription, recording],
      request_id: read.headers.get("request-id"),
    });
    expect(row.hash).toMatch(/^[0-9a-f]{64}$/);
    // The redacted view is audited apart, so "who saw the original" has its own answer.
    expect((await t.call("GET", `/v1/transcriptions/${transcription}?redacted=true`, { key: reader.key })).status).toBe(200);
    expect((await eventsFor(t, tenant.test, `resource_id=${transcription}`)).map((e) => e.action)).toEqual([
      "transcription.redacted.read",
      "transcription.read",
    ]);

    // Audio, summaries, search results (the chunk ids) and Ask (the chunk ids the model was given).
    expect((await t.call("GET", `/v1/recordings/${recording}/audio`, { key: reader.key, headers: { range: "bytes=0-9" } })).status).toBe(206);
    expect((await t.call("GET", `/v1/summaries?transcription_id=${transcription}`, { key: reader.key })).body.data).toHaveLength(1);
    const search = await t.call("POST", "/v1/recordings/search", { key: reader.key, body: { query: "headache", end_user_id: endUser } });
    const chunkIds = search.body.results.map((r: { chunk_id: string }) => r.chunk_id);
    expect(chunkIds.length).toBeGreaterThan(0);
    const ask = await t.call("POST", "/v1/ask/sessions", {
      key: reader.key,
      body: { scope: { type: "library" }, end_user_id: endUser, initial_message: { content: "Since when the headache?" } },
    });
    expect(ask.status).toBe(200);
    const given = ask.body.sources.map((s: { chunk_id: string }) => s.chunk_id);
    expect(given.length).toBeGreaterThan(0);

    const mine = await eventsFor(t, tenant.test, `actor_id=${reader.id}`);
    const byAction = Object.fromEntries(mine.map((e) => [e.action, e.resource_ids]));
    expect(byAction["recording.audio.read"]).toEqual([recording]);
    expect(byAction["summary.read"]).toContain(transcription);
    expect(byAction["search.results.read"]).toEqual(expect.arrayContaining([...chunkIds, recording]));
    expect(byAction["ask.context.read"]).toEqual(expect.arrayContaining([ask.body.session_id, ...given]));
    // "Who read this recording?" answers with every one of those reads.
    const aboutRecording = (await eventsFor(t, tenant.test, `resource_id=${recording}&limit=100`)).map((e) => e.action);
    expect(new Set(aboutRecording)).toEqual(
      new Set(["transcription.read", "transcription.redacted.read", "recording.audio.read", "summary.read", "search.results.read", "ask.context.read"]),
    );
    // The query text is never recorded: ids only.
    expect(JSON.stringify(mine)).not.toContain("headache");
  });

  test("over a real connection the client's address is recorded", async () => {
    const { t, tenant, transcription, reader } = await auditedApp();
    t.app.listen({ port: 0, hostname: "127.0.0.1" });
    try {
      const res = await fetch(`http://127.0.0.1:${t.app.server!.port}/v1/transcriptions/${transcription}`, {
        headers: { authorization: `Bearer ${reader.key}` },
      });
      expect(res.status).toBe(200);
      const [row] = await eventsFor(t, tenant.test, `resource_id=${transcription}`);
      expect(row).toMatchObject({ client_address: "127.0.0.1", request_id: res.headers.get("request-id") });
    } finally {
      await t.app.stop();
    }
  });

  test("a restricted key needs audit:read; other projects' rows are not listed; filters validate", async () => {
    const { t, tenant, reader } = await auditedApp();
    expect((await t.call("GET", "/v1/audit-events", { key: reader.key })).status).toBe(403);
    const auditor = tenant.key("test", { scopes: ["audit:read"] });
    await t.call("GET", "/v1/recordings", { key: reader.key });
    expect((await t.call("GET", "/v1/audit-events", { key: auditor })).status).toBe(200);
    const other = makeTenant(t.deps);
    // The other project sees only the creation of its own test-mode key (the live key is the live log's).
    expect((await eventsFor(t, other.test, "limit=100")).map((e) => e.action)).toEqual(["key.create"]);
    expect((await t.call("GET", "/v1/audit-events?action=recording.sing", { key: auditor })).status).toBe(422);
    const past = await eventsFor(t, auditor, `created_before=${encodeURIComponent("2000-01-01T00:00:00Z")}`);
    expect(past).toEqual([]);
  });

  test("pages with a cursor, newest first", async () => {
    const { t, tenant, transcription, reader } = await auditedApp();
    for (let i = 0; i < 5; i++) await t.call("GET", `/v1/transcriptions/${transcription}`, { key: reader.key });
    const first = await t.call("GET", `/v1/audit-events?action=transcription.read&limit=3`, { key: tenant.test });
    expect(first.body).toMatchObject({ has_more: true, total: 5 });
    const second = await t.call("GET", `/v1/audit-events?action=transcription.read&limit=3&cursor=${first.body.next_cursor}`, { key: tenant.test });
    expect(second.body.has_more).toBe(false);
    const sequences = [...first.body.data, ...second.body.data].map((e: { sequence: number }) => e.sequence);
    expect(sequences).toEqual([...sequences].sort((a, b) => b - a));
    expect(new Set(sequences).size).toBe(5);
  });

  test("deletions and key actions are recorded in the deleting transaction", async () => {
    const { t, tenant, recording } = await auditedApp();
    expect((await t.call("DELETE", `/v1/recordings/${recording}`, { key: tenant.test })).status).toBe(204);
    const [deletion] = await eventsFor(t, tenant.test, "action=recording.delete");
    expect(deletion.resource_ids).toEqual([recording]);
    expect(deletion.actor.type).toBe("secret");
    const key = createApiKey(t.deps.db, { project: tenant.project.name, mode: "test", scopes: ["recordings:read"] }, t.clock.now());
    revokeApiKey(t.deps, key.id, t.clock.now());
    const keyActions = (await eventsFor(t, tenant.test, `resource_id=${key.id}`)).map((e) => [e.action, e.actor.type]);
    expect(keyActions).toEqual([
      ["key.revoke", "operator"],
      ["key.create", "operator"],
    ]);
  });

  test("the log is append-only, and `parley audit verify` names the first row someone altered", async () => {
    const { t, transcription, reader } = await auditedApp();
    for (let i = 0; i < 3; i++) await t.call("GET", `/v1/transcriptions/${transcription}`, { key: reader.key });
    const { db } = t.deps;
    expect(() => db.run("UPDATE audit_events SET actor_id = 'someone-else'")).toThrow(/append-only/);
    expect(() => db.run("DELETE FROM audit_events")).toThrow(/append-only/);

    const intact = await auditVerify(t.deps.config.dataDir);
    expect(intact.code).toBe(0);
    expect(intact.stdout).toContain("audit chain intact");

    // Someone with the database file goes around the triggers and rewrites who read what.
    const target = db
      .query<{ seq: number; id: string }, []>("SELECT seq, id FROM audit_events WHERE action = 'transcription.read' ORDER BY seq LIMIT 1 OFFSET 1")
      .get()!;
    db.run("DROP TRIGGER audit_events_no_update");
    db.query("UPDATE audit_events SET actor_id = 'cred_innocent' WHERE seq = ?").run(target.seq);
    const broken = await auditVerify(t.deps.config.dataDir);
    expect(broken.code).toBe(1);
    expect(broken.stderr).toContain(`row ${target.seq} (${target.id})`);
  });

  test("the index behind the resource filter is checked too: an access removed from it, or one made up, fails verify", async () => {
    const { t, tenant, transcription, reader } = await auditedApp();
    await t.call("GET", `/v1/transcriptions/${transcription}`, { key: reader.key });
    const { db } = t.deps;
    const row = db
      .query<{ seq: number; id: string }, []>("SELECT seq, id FROM audit_events WHERE action = 'transcription.read' ORDER BY seq DESC LIMIT 1")
      .get()!;
    expect((await eventsFor(t, tenant.test, `resource_id=${transcription}`)).map((e) => e.id)).toContain(row.id);
    expect(() => db.run("DELETE FROM audit_event_resources")).toThrow(/append-only/);

    // Someone with the database file hides the read from "who read this transcription".
    db.run("DROP TRIGGER audit_event_resources_no_delete");
    db.query("DELETE FROM audit_event_resources WHERE resource_id = ? AND seq = ?").run(transcription, row.seq);
    const hidden = await auditVerify(t.deps.config.dataDir);
    expect(hidden.code).toBe(1);
    expect(hidden.stderr).toContain(`row ${row.seq} (${row.id})`);
    expect(hidden.stderr).toContain(`lacks its ${transcription}`);

    // Put back, then an entry no row backs.
    db.query("INSERT INTO audit_event_resources (resource_id, seq) VALUES (?, ?)").run(transcription, row.seq);
    expect((await auditVerify(t.deps.config.dataDir)).code).toBe(0);
    db.query("INSERT INTO audit_event_resources (resource_id, seq) VALUES ('rec_never_read', ?)").run(row.seq);
    const madeUp = await auditVerify(t.deps.config.dataDir);
    expect(madeUp.code).toBe(1);
    expect(madeUp.stderr).toContain("rec_never_read");
  });
});
