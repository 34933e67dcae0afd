import { describe, expect, test } from "bun:test";
import { ScriptedTranscriber } from "../../src/engines/transcriber.test-double";
import { makeTenant, makeTestApp } from "../helpers";
import { eventsOf, seedRecording, voiced, wav } from "./pipeline-fixtures";

const DAY = 86_400_000;

describe("retention", () => {
  test("expired recordings are erased as by DELETE, nearest configuration level first; held and kept ones stay", async () => {
    const t = await makeTestApp({ engines: { transcriber: new ScriptedTranscriber() } });
    const tenant = makeTenant(t.deps);
    const key = tenant.test;
    const call = async (method: string, path: string, body?: unknown) => {
      const r = await t.call(method, path, { key, body });
      expect({ path, status: r.status < 300 ? "ok" : r.body }).toEqual({ path, status: "ok" });
      return r.body;
    };
    const patient = (await call("POST", "/v1/end-users", { name: "Patient" })).id;
    const keeper = (await call("POST", "/v1/end-users", { name: "Kept forever" })).id;
    const device = (await call("POST", "/v1/devices", { serial_number: "SN-RETENTION", model: "parley_pin" })).id;
    const seed = (endUserId: string, deviceId: string | null = null) =>
      seedRecording(t.deps, { projectId: tenant.project.id, mode: "test" }, wav(voiced(1)), { endUserId, deviceId });

    const plain = await seed(patient);
    const held = await seed(patient);
    const kept = await seed(keeper);
    const fromDevice = await seed(patient, device);
    const transcribed = await seed(patient);
    await call("POST", "/v1/transcriptions", { recording_id: transcribed });
    await t.deps.queue.drain();

    await call("PUT", "/v1/config/project", { retention_audio_days: 30 });
    await call("PUT", `/v1/config/end-users/${keeper}`, { retention_audio_days: "keep" });
    await call("PUT", `/v1/config/devices/${device}`, { retention_audio_days: 7 });
    expect((await call("GET", `/v1/config/end-users/${keeper}`)).effective.retention_audio_days).toBeNull();
    expect((await call("GET", `/v1/config/devices/${device}`)).effective).toMatchObject({ retention_audio_days: 7, retention_transcript_days: null });
    const hold = await call("POST", "/v1/legal-holds", { matter: "Patient v. Clinic", recording_id: held });
    const exists = async (id: string) => (await t.call("GET", `/v1/recordings/${id}`, { key })).status === 200;
    const standing = async () => {
      const out: Record<string, boolean> = {};
      for (const [name, id] of Object.entries({ plain, held, kept, fromDevice, transcribed })) out[name] = await exists(id);
      return out;
    };

    t.clock.advance(8 * DAY);
    await t.runTask("expire-recordings");
    expect(await standing()).toEqual({ plain: true, held: true, kept: true, fromDevice: false, transcribed: true });

    t.clock.advance(23 * DAY);
    await t.runTask("expire-recordings");
    // A transcript kept forever (retention_transcript_days unset) keeps its recording: only its audio goes.
    expect(await standing()).toEqual({ plain: false, held: true, kept: true, fromDevice: false, transcribed: true });
    const audio = await t.call("GET", `/v1/recordings/${transcribed}/audio`, { key });
    expect([audio.status, audio.body.error.message]).toEqual([409, expect.stringContaining("erased by retention")]);
    expect((await t.call("GET", `/v1/transcriptions?recording_id=${transcribed}`, { key })).body.data[0].text).toBeString();
    expect((await t.call("POST", "/v1/transcriptions", { key, body: { recording_id: transcribed } })).status).toBe(409);
    await t.deps.queue.drain();
    expect(await t.deps.storage.size(`${tenant.project.id}/test/${transcribed}/original`)).toBeNull();
    expect((await call("GET", "/v1/audit-events?action=recording.audio.expire")).data.map((e: { resource_ids: string[] }) => e.resource_ids)).toEqual([
      [transcribed],
    ]);
    // The held recording kept its audio too.
    expect((await t.call("GET", `/v1/recordings/${held}/audio`, { key })).status).toBe(200);

    await call("PUT", "/v1/config/project", { retention_audio_days: 30, retention_transcript_days: 60 });
    t.clock.advance(30 * DAY);
    await t.runTask("expire-recordings");
    expect(await standing()).toEqual({ plain: false, held: true, kept: true, fromDevice: false, transcribed: false });

    // The same erasure as DELETE: the event, the stored bytes, the transcript.
    const deleted = eventsOf(t.deps, "recording.deleted").map((e) => e.data);
    expect(deleted.map((d) => d.id).sort()).toEqual([fromDevice, plain, transcribed].sort());
    expect(Object.keys(deleted[0]!).sort()).toEqual(["deleted_at", "id"]);
    await t.deps.queue.drain();
    expect(await t.deps.storage.size(`${tenant.project.id}/test/${plain}/original`)).toBeNull();
    expect((await t.call("GET", `/v1/transcriptions?recording_id=${transcribed}`, { key })).body.data).toEqual([]);

    // Audited as the appliance's own work; the held one's hold is still active, and once released it goes on the next run.
    const expiries = (await call("GET", "/v1/audit-events?action=recording.expire")).data;
    expect(expiries.map((e: { resource_ids: string[] }) => e.resource_ids[0]).sort()).toEqual([fromDevice, plain, transcribed].sort());
    expect(expiries[0].actor).toEqual({ type: "system", id: "retention", admin_email: null, device_id: null });
    await call("POST", `/v1/legal-holds/${hold.id}/release`);
    await t.runTask("expire-recordings");
    expect(await exists(held)).toBe(false);
    expect(await exists(kept)).toBe(true);
  });

  test("retention values: whole days from 1, or keep; anything else is 422", async () => {
    const t = await makeTestApp();
    const tenant = makeTenant(t.deps);
    for (const value of [0, -1, 1.5, "forever", 40_000]) {
      const r = await t.call("PUT", "/v1/config/project", { key: tenant.test, body: { retention_transcript_days: value } });
      expect({ value, status: r.status, param: r.body.error?.param }).toEqual({ value, status: 422, param: "retention_transcript_days" });
    }
    const ok = await t.call("PUT", "/v1/config/project", { key: tenant.test, body: { retention_transcript_days: 2555 } });
    expect(ok.body.overrides.retention_transcript_days).toBe(2555);
    const change = (await t.call("GET", "/v1/audit-events?action=config.update", { key: tenant.test })).body.data[0];
    expect(change.resource_ids).toEqual([tenant.project.id]);
  });
});
