import { beforeAll, describe, expect, test } from "bun:test";
import { ScriptedLlm } from "../../src/engines/llm.test-double";
import { ScriptedTranscriber } from "../../src/engines/transcriber.test-double";
import { issueCredential } from "../../src/http/credentials";
import { makeTenant, makeTestApp } from "../helpers";
import { concat, seedRecording, silence, voiced, wav } from "./pipeline-fixtures";

let t: Awaited<ReturnType<typeof makeTestApp>>;
let acme: ReturnType<typeof makeTenant>;
let other: ReturnType<typeof makeTenant>;
let mine: string;
let theirs: string;
/** A recording, its completed transcription and summary, per end user. */
const data: Record<"mine" | "theirs", { rec: string; txn: string; sum: string }> = {} as never;

beforeAll(async () => {
  const engines = { transcriber: new ScriptedTranscriber(), llm: new ScriptedLlm() };
  t = await makeTestApp({ engines });
  acme = makeTenant(t.deps, "acme");
  other = makeTenant(t.deps, "other");
  mine = (await t.call("POST", "/v1/end-users", { key: acme.test, body: {} })).body.id;
  theirs = (await t.call("POST", "/v1/end-users", { key: acme.test, body: {} })).body.id;
  for (const [who, endUserId] of [
    ["mine", mine],
    ["theirs", theirs],
  ] as const) {
    const rec = await seedRecording(t.deps, { projectId: acme.project.id, mode: "test" }, wav(concat(voiced(2), silence(1), voiced(2))), { endUserId });
    const txn = (await t.call("POST", "/v1/transcriptions", { key: acme.test, body: { recording_id: rec } })).body.id;
    await t.deps.queue.drain();
    const sum = (await t.call("GET", `/v1/summaries?transcription_id=${txn}`, { key: acme.test })).body.data[0].id;
    data[who] = { rec, txn, sum };
  }
});

describe("pipeline security: tenancy", () => {
  test("another project and the other mode see none of it", async () => {
    const { rec, txn, sum } = data.mine;
    for (const key of [other.test, other.live, acme.live]) {
      expect((await t.call("GET", `/v1/transcriptions/${txn}`, { key })).status).toBe(404);
      expect((await t.call("GET", `/v1/summaries/${sum}`, { key })).status).toBe(404);
      expect((await t.call("GET", `/v1/transcriptions?recording_id=${rec}`, { key })).body).toMatchObject({ data: [], total: 0 });
      expect((await t.call("GET", `/v1/summaries?transcription_id=${txn}`, { key })).body).toMatchObject({ data: [], total: 0 });
      expect((await t.call("GET", "/v1/transcriptions", { key })).body.data).toEqual([]);
      expect((await t.call("POST", "/v1/transcriptions", { key, body: { recording_id: rec } })).status).toBe(404);
      expect((await t.call("POST", "/v1/summaries", { key, body: { transcription_id: txn } })).status).toBe(404);
    }
  });
});

describe("pipeline security: keys and tokens", () => {
  test("restricted keys need the matching scope; write does not imply read", async () => {
    const { rec, txn, sum } = data.mine;
    const cases: [string[], string, string, object | undefined, number][] = [
      [["transcriptions:read"], "GET", `/v1/transcriptions/${txn}`, undefined, 200],
      [["transcriptions:read"], "POST", "/v1/transcriptions", { recording_id: rec }, 403],
      [["transcriptions:write"], "GET", `/v1/transcriptions/${txn}`, undefined, 403],
      [["summaries:read"], "GET", `/v1/transcriptions?recording_id=${rec}`, undefined, 403],
      [["summaries:read"], "GET", `/v1/summaries/${sum}`, undefined, 200],
      [["summaries:read"], "POST", "/v1/summaries", { transcription_id: txn }, 403],
      [["transcriptions:write"], "POST", "/v1/summaries", { transcription_id: txn }, 403],
      [["summaries:write"], "GET", `/v1/summaries?transcription_id=${txn}`, undefined, 403],
    ];
    for (const [scopes, method, path, body, status] of cases) {
      const r = await t.call(method, path, { key: acme.key("test", { scopes }), body });
      expect([scopes, method, path, r.status]).toEqual([scopes, method, path, status]);
      if (status === 403) expect(r.body.error.code).toBe("forbidden");
    }
    const writer = acme.key("test", { scopes: ["summaries:write"] });
    const r = await t.call("POST", "/v1/summaries", { key: writer, body: { transcription_id: txn, template: "legal" } });
    expect(r.status).toBe(202);
    await t.deps.queue.drain();
  });

  test("an end-user-scoped key reaches only its end user's recordings, transcriptions and summaries", async () => {
    const scoped = acme.key("test", { endUserId: mine });
    expect((await t.call("GET", `/v1/transcriptions/${data.mine.txn}`, { key: scoped })).status).toBe(200);
    expect((await t.call("GET", `/v1/summaries/${data.mine.sum}`, { key: scoped })).status).toBe(200);
    expect((await t.call("GET", `/v1/transcriptions/${data.theirs.txn}`, { key: scoped })).status).toBe(404);
    expect((await t.call("GET", `/v1/summaries/${data.theirs.sum}`, { key: scoped })).status).toBe(404);
    expect((await t.call("POST", "/v1/transcriptions", { key: scoped, body: { recording_id: data.theirs.rec } })).status).toBe(404);
    expect((await t.call("POST", "/v1/summaries", { key: scoped, body: { transcription_id: data.theirs.txn } })).status).toBe(404);
    const txns = (await t.call("GET", "/v1/transcriptions", { key: scoped })).body.data.map((x: any) => x.id);
    expect(txns).toEqual([data.mine.txn]);
    const sums = (await t.call("GET", "/v1/summaries", { key: scoped })).body.data;
    expect(sums.map((x: any) => x.id)).toContain(data.mine.sum);
    expect(new Set(sums.map((x: any) => x.transcription_id))).toEqual(new Set([data.mine.txn]));
    expect((await t.call("GET", `/v1/transcriptions?recording_id=${data.theirs.rec}`, { key: scoped })).body.data).toEqual([]);
  });

  test("device and upload tokens cannot call these endpoints; no credential is 401", async () => {
    const device = issueCredential(t.deps.db, {
      kind: "device",
      projectId: acme.project.id,
      mode: "test",
      deviceId: "dev_x",
      endUserId: mine,
      now: t.clock.now(),
    }).token;
    const upload = issueCredential(t.deps.db, {
      kind: "upload",
      projectId: acme.project.id,
      mode: "test",
      recordingId: data.mine.rec,
      now: t.clock.now(),
    }).token;
    for (const key of [device, upload]) {
      expect((await t.call("POST", "/v1/transcriptions", { key, body: { recording_id: data.mine.rec } })).status).toBe(403);
      expect((await t.call("GET", `/v1/transcriptions/${data.mine.txn}`, { key })).status).toBe(403);
      expect((await t.call("POST", "/v1/summaries", { key, body: { transcription_id: data.mine.txn } })).status).toBe(403);
      expect((await t.call("GET", `/v1/summaries/${data.mine.sum}`, { key })).status).toBe(403);
    }
    expect((await t.call("GET", "/v1/transcriptions")).status).toBe(401);
    expect((await t.call("POST", "/v1/summaries", { body: { transcription_id: data.mine.txn } })).status).toBe(401);
  });
});
