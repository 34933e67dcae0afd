import { beforeAll, describe, expect, test } from "bun:test";
import { HashingTestEmbedder } from "../../src/engines/embedder.test-double";
import { issueCredential } from "../../src/http/credentials";
import { makeTenant, makeTestApp } from "../helpers";
import { BUDGET, seedTranscript } from "./search-corpus";

let t: Awaited<ReturnType<typeof makeTestApp>>;
let acme: ReturnType<typeof makeTenant>;
let other: ReturnType<typeof makeTenant>;
let ada: string;

beforeAll(async () => {
  t = await makeTestApp({ engines: { embedder: new HashingTestEmbedder() }, env: { PARLEY_ASK_PROVIDER: "extractive" } });
  acme = makeTenant(t.deps);
  other = makeTenant(t.deps);
  ada = (await t.call("POST", "/v1/end-users", { key: acme.test, body: { name: "Ada" } })).body.id;
});

/** A completed, indexed transcript of the planning call (BUDGET: SPEAKER_1 and SPEAKER_2 alternate). */
async function planningCall(endUserId: string | null = ada) {
  const seeded = seedTranscript(t.deps, { projectId: acme.project.id, mode: "test" }, { endUserId, recordedAt: "2026-01-10T09:00:00.000Z", lines: BUDGET });
  await t.deps.queue.drain();
  return seeded;
}

const patch = (id: string, index: number | string, body: unknown, key = acme.test) =>
  t.call("PATCH", `/v1/transcriptions/${id}/segments/${index}`, { key, body });
const get = (id: string, query = "", key = acme.test) => t.call("GET", `/v1/transcriptions/${id}${query}`, { key });
const auditActions = (resource: string) =>
  t.deps.db
    .query<{ action: string; actor_type: string }, [string]>(
      "SELECT e.action, e.actor_type FROM audit_events e JOIN audit_event_resources r ON r.seq = e.seq WHERE r.resource_id = ? ORDER BY e.seq",
    )
    .all(resource);

describe("corrections with history", () => {
  test("a corrected segment is a new revision; the original stays readable as revision 0; the revisions say who changed what", async () => {
    const { transcriptionId: id } = await planningCall();
    const before = (await get(id)).body;
    expect(before.revision).toBe(0);

    const r = await patch(id, 1, { text: "The marketing budget for next quarter is forty five thousand dollars." });
    expect(r.status).toBe(200);
    expect(r.body.revision).toBe(1);
    expect(r.body.segments[1].text).toBe("The marketing budget for next quarter is forty five thousand dollars.");
    expect(r.body.text).toContain("forty five thousand");
    expect(r.body.segments.filter((_: unknown, i: number) => i !== 1)).toEqual(before.segments.filter((_: unknown, i: number) => i !== 1));

    expect((await get(id)).body).toMatchObject({ revision: 1, text: r.body.text });
    const original = await get(id, "?revision=0");
    expect(original.status).toBe(200);
    expect(original.body).toEqual(before);
    const missing = await get(id, "?revision=2");
    expect(missing.status).toBe(404);
    expect(missing.body.error).toMatchObject({ code: "not_found", param: "revision" });

    const revisions = await t.call("GET", `/v1/transcriptions/${id}/revisions`, { key: acme.test });
    expect(revisions.status).toBe(200);
    expect(revisions.body).toMatchObject({ has_more: false, total: 2 });
    expect(revisions.body.data[0]).toMatchObject({
      revision: 1,
      transcription_id: id,
      author: { type: "secret" },
      restored_from: null,
      changes: [{ segment: 1, field: "text", from: BUDGET[1]![3], to: "The marketing budget for next quarter is forty five thousand dollars." }],
    });
    expect(revisions.body.data[1]).toMatchObject({ revision: 0, author: null, changes: [] });
    expect(auditActions(id).map((a) => a.action)).toContain("transcription.revise");
  });

  test("search and Ask read the latest revision", async () => {
    const { transcriptionId: id, recordingId } = await planningCall();
    expect((await patch(id, 3, { text: "The launch date moves to Zanzibar because the vendor is late." })).status).toBe(200);
    await t.deps.queue.drain();
    const found = await t.call("POST", "/v1/recordings/search", { key: acme.test, body: { query: "Zanzibar", end_user_id: ada } });
    expect(found.status).toBe(200);
    const hit = found.body.results.find((x: any) => x.recording_id === recordingId);
    expect(hit.chunk_text).toContain("Zanzibar");
    const asked = await t.call("POST", "/v1/ask/sessions", {
      key: acme.test,
      body: { scope: { type: "recording", recording_id: recordingId }, initial_message: { content: "Where does the launch move?" } },
    });
    expect(asked.status).toBe(200);
    expect(asked.body.message.content).toContain("Zanzibar");
  });

  test("a speaker moves one segment, or renames the whole voice; bulk edits are one revision", async () => {
    const { transcriptionId: id } = await planningCall();
    const moved = await patch(id, 0, { speaker: "Grace" });
    expect(moved.status).toBe(200);
    expect(moved.body.segments.map((s: any) => s.speaker)).toEqual(["Grace", "SPEAKER_2", "SPEAKER_1", "SPEAKER_2", "SPEAKER_1"]);
    expect(moved.body.speakers.find((s: any) => s.label === "Grace")).toMatchObject({ id: "SPEAKER_3" });

    const renamed = await patch(id, 1, { speaker: "Dr. Weber", apply_to: "speaker" });
    expect(renamed.body.segments.map((s: any) => s.speaker)).toEqual(["Grace", "Dr. Weber", "SPEAKER_1", "Dr. Weber", "SPEAKER_1"]);
    expect(renamed.body.speakers.find((s: any) => s.id === "SPEAKER_2")).toMatchObject({ label: "Dr. Weber" });
    expect(renamed.body.revision).toBe(2);

    // Two voices the diarizer split become one: SPEAKER_1's segments join Grace.
    const merged = await patch(id, 2, { speaker: "Grace", apply_to: "speaker" });
    expect(merged.body.segments.map((s: any) => s.speaker)).toEqual(["Grace", "Dr. Weber", "Grace", "Dr. Weber", "Grace"]);

    const bulk = await t.call("PATCH", `/v1/transcriptions/${id}/segments`, {
      key: acme.test,
      body: {
        segments: [
          { index: 0, text: "Thanks all." },
          { index: 4, text: "Review on Tuesday.", speaker: "SPEAKER_2" },
        ],
      },
    });
    expect(bulk.status).toBe(200);
    expect(bulk.body.revision).toBe(4);
    expect(bulk.body.segments[4]).toMatchObject({ text: "Review on Tuesday.", speaker: "Dr. Weber" });

    // Nothing changes: no revision.
    expect((await patch(id, 0, { text: "Thanks all." })).body.revision).toBe(4);
  });

  test("undo restores an earlier revision as a new one", async () => {
    const { transcriptionId: id } = await planningCall();
    await patch(id, 0, { text: "First fix." });
    await patch(id, 0, { text: "Second fix." });
    const undone = await t.call("POST", `/v1/transcriptions/${id}/revisions`, { key: acme.test, body: { restore: 1 } });
    expect(undone.status).toBe(201);
    expect(undone.body).toMatchObject({ revision: 3 });
    expect(undone.body.segments[0].text).toBe("First fix.");
    const [latest] = (await t.call("GET", `/v1/transcriptions/${id}/revisions`, { key: acme.test })).body.data;
    expect(latest).toMatchObject({ revision: 3, restored_from: 1, changes: [{ segment: 0, field: "text", from: "Second fix.", to: "First fix." }] });
    for (const restore of [3, 4]) {
      const bad = await t.call("POST", `/v1/transcriptions/${id}/revisions`, { key: acme.test, body: { restore } });
      expect(bad.status).toBe(422);
      expect(bad.body.error.param).toBe("restore");
    }
  });

  test("naming speakers is a revision too", async () => {
    const { transcriptionId: id } = await planningCall();
    const named = await t.call("PATCH", `/v1/transcriptions/${id}/speakers`, { key: acme.test, body: { SPEAKER_1: { name: "Ada Lovelace" } } });
    expect(named.status).toBe(200);
    expect(named.body.revision).toBe(1);
    expect((await get(id, "?revision=0")).body.segments[0].speaker).toBe("SPEAKER_1");
  });
});

describe("disclosures", () => {
  test("an export, a correction and the history each disclose the end user whose transcript it is", async () => {
    const { transcriptionId: id } = await planningCall();
    await patch(id, 0, { text: "Thanks, everyone." });
    await t.call("GET", `/v1/transcriptions/${id}/revisions`, { key: acme.test });
    expect((await t.call("GET", `/v1/transcriptions/${id}/export?format=txt`, { key: acme.test })).status).toBe(200);
    const disclosed = await t.call("GET", `/v1/end-users/${ada}/disclosures?limit=100`, { key: acme.test });
    expect(disclosed.status).toBe(200);
    const actions = disclosed.body.data.filter((d: any) => JSON.stringify(d).includes(id)).map((d: any) => d.action);
    expect(actions).toContain("transcription.export");
    expect(actions.filter((a: string) => a === "transcription.read").length).toBeGreaterThanOrEqual(2);
  });
});

describe("bad corrections change nothing", () => {
  test("a missing segment, text over 10,000 characters, no change given, a new name like a speaker id: 4xx in the error body", async () => {
    const { transcriptionId: id } = await planningCall();
    const cases: [unknown, number | string, number, string, string | undefined][] = [
      [{ text: "x" }, 5, 404, "not_found", "index"],
      [{ text: "x" }, -1, 422, "validation_error", undefined],
      [{ text: "x".repeat(10_001) }, 0, 422, "validation_error", "text"],
      [{}, 0, 422, "validation_error", undefined],
      [{ speaker: "SPEAKER_9" }, 0, 422, "validation_error", "speaker"],
      [{ text: "x", extra: 1 }, 0, 422, "validation_error", undefined],
    ];
    for (const [body, index, status, code, param] of cases) {
      const r = await patch(id, index, body);
      expect([r.status, r.body.error.code]).toEqual([status, code]);
      if (param) expect(r.body.error.param).toBe(param);
    }
    const bulk = await t.call("PATCH", `/v1/transcriptions/${id}/segments`, {
      key: acme.test,
      body: {
        segments: [
          { index: 0, text: "changed" },
          { index: 9, text: "no such segment" },
        ],
      },
    });
    expect(bulk.status).toBe(422);
    expect(bulk.body.error.param).toBe("segments[1].index");
    const after = (await get(id)).body;
    expect(after.revision).toBe(0);
    expect(after.segments[0].text).toBe(BUDGET[0]![3]);
  });

  test("a held recording's transcript is frozen: 409 legal_hold_active until the hold is released", async () => {
    const { transcriptionId: id, recordingId } = await planningCall();
    const hold = await t.call("POST", "/v1/legal-holds", { key: acme.test, body: { recording_id: recordingId, matter: "Case 7" } });
    expect(hold.status).toBe(201);
    for (const r of [
      await patch(id, 0, { text: "tampered" }),
      await t.call("PATCH", `/v1/transcriptions/${id}/speakers`, { key: acme.test, body: { SPEAKER_1: { name: "Ada" } } }),
    ]) {
      expect(r.status).toBe(409);
      expect(r.body.error.code).toBe("legal_hold_active");
    }
    expect((await get(id)).body.revision).toBe(0);
    await t.call("POST", `/v1/legal-holds/${hold.body.id}/release`, { key: acme.test });
    expect((await patch(id, 0, { text: "fixed" })).status).toBe(200);
  });

  test("a deleted recording's transcript: 404, and its revisions are erased with it", async () => {
    const { transcriptionId: id, recordingId } = await planningCall();
    await patch(id, 0, { text: "fixed" });
    const count = () => t.deps.db.query<{ n: number }, [string]>("SELECT COUNT(*) AS n FROM transcription_revisions WHERE transcription_id = ?").get(id)!.n;
    expect(count()).toBe(2);
    expect((await t.call("DELETE", `/v1/recordings/${recordingId}`, { key: acme.test })).status).toBe(204);
    expect(count()).toBe(0);
    const r = await patch(id, 0, { text: "again" });
    expect([r.status, r.body.error.code]).toEqual([404, "not_found"]);
  });

  test("security: the scope, another project, and an end user's key for another end user", async () => {
    const { transcriptionId: id } = await planningCall();
    const readOnly = issueCredential(t.deps.db, {
      kind: "secret",
      projectId: acme.project.id,
      mode: "test",
      scopes: ["transcriptions:read"],
      now: t.clock.now(),
    }).token;
    expect((await patch(id, 0, { text: "x" }, readOnly)).status).toBe(403);
    expect((await patch(id, 0, { text: "x" }, other.test)).status).toBe(404);
    expect((await t.call("GET", `/v1/transcriptions/${id}/revisions`, { key: other.test })).status).toBe(404);
    const bob = (await t.call("POST", "/v1/end-users", { key: acme.test, body: { name: "Bob" } })).body.id;
    const bobsKey = issueCredential(t.deps.db, { kind: "secret", projectId: acme.project.id, mode: "test", endUserId: bob, now: t.clock.now() }).token;
    expect((await patch(id, 0, { text: "x" }, bobsKey)).status).toBe(404);
    expect((await get(id)).body.revision).toBe(0);
  });
});
