import { describe, expect, test } from "bun:test";
import { makeTenant, makeTestApp } from "../helpers";
import { seedRecording, voiced, wav } from "./pipeline-fixtures";

async function heldApp() {
  const t = await makeTestApp();
  const tenant = makeTenant(t.deps);
  const key = tenant.test;
  const endUser = (await t.call("POST", "/v1/end-users", { key, body: { name: "Plaintiff" } })).body.id as string;
  const device = (await t.call("POST", "/v1/devices", { key, body: { serial_number: `SN-${crypto.randomUUID().slice(0, 8)}`, model: "parley_pin" } })).body
    .id as string;
  const recording = () => seedRecording(t.deps, { projectId: tenant.project.id, mode: "test" }, wav(voiced(1)), { endUserId: endUser, deviceId: device });
  const hold = async (body: object) => {
    const r = await t.call("POST", "/v1/legal-holds", { key, body: { matter: "Doe v. Clinic", ...body } });
    expect(r.status).toBe(201);
    return r.body;
  };
  return { t, tenant, key, endUser, device, recording, hold };
}

describe("legal holds", () => {
  test("a held recording's DELETE is 409 legal_hold_active naming the hold, and leaves it untouched; after release it deletes", async () => {
    const { t, key, recording, hold } = await heldApp();
    const rec = await recording();
    const lh = await hold({ recording_id: rec, note: "subpoena 12" });
    expect(lh).toMatchObject({
      matter: "Doe v. Clinic",
      note: "subpoena 12",
      recording_id: rec,
      end_user_id: null,
      device_id: null,
      status: "active",
      released_at: null,
    });
    expect(lh.id).toMatch(/^lh_/);

    const refused = await t.call("DELETE", `/v1/recordings/${rec}`, { key });
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe("legal_hold_active");
    expect(refused.body.error.message).toContain(lh.id);
    expect((await t.call("GET", `/v1/recordings/${rec}/audio`, { key })).status).toBe(200);
    expect(t.deps.db.query("SELECT COUNT(*) AS n FROM events WHERE type = 'recording.deleted'").get()).toEqual({ n: 0 });

    const released = await t.call("POST", `/v1/legal-holds/${lh.id}/release`, { key });
    expect(released.body).toMatchObject({ status: "released", released_at: expect.any(String) });
    expect((await t.call("POST", `/v1/legal-holds/${lh.id}/release`, { key })).body.error.code).toBe("resource_conflict");
    expect((await t.call("DELETE", `/v1/recordings/${rec}`, { key })).status).toBe(204);

    const audited = (await t.call("GET", `/v1/audit-events?resource_id=${lh.id}`, { key })).body.data.map((e: { action: string; resource_ids: string[] }) => [
      e.action,
      e.resource_ids,
    ]);
    expect(audited).toEqual([
      ["legal_hold.release", [lh.id, rec]],
      ["legal_hold.create", [lh.id, rec]],
    ]);
  });

  test("a hold on an end user or a device covers their recordings; a hold on a recording covers its end user's and device's deletion", async () => {
    const { t, key, endUser, device, recording, hold } = await heldApp();
    const rec = await recording();
    const onUser = await hold({ end_user_id: endUser });
    for (const path of [`/v1/recordings/${rec}`, `/v1/end-users/${endUser}`]) {
      const r = await t.call("DELETE", path, { key });
      expect({ path, status: r.status, code: r.body.error.code, names: r.body.error.message.includes(onUser.id) }).toEqual({
        path,
        status: 409,
        code: "legal_hold_active",
        names: true,
      });
    }
    await t.call("POST", `/v1/legal-holds/${onUser.id}/release`, { key });

    const onDevice = await hold({ device_id: device });
    expect((await t.call("DELETE", `/v1/recordings/${rec}`, { key })).body.error.code).toBe("legal_hold_active");
    expect((await t.call("DELETE", `/v1/devices/${device}`, { key })).body.error.code).toBe("legal_hold_active");
    await t.call("POST", `/v1/legal-holds/${onDevice.id}/release`, { key });

    const onRecording = await hold({ recording_id: rec });
    for (const path of [`/v1/end-users/${endUser}`, `/v1/devices/${device}`]) {
      const r = await t.call("DELETE", path, { key });
      expect({ path, status: r.status, names: r.body.error?.message.includes(onRecording.id) }).toEqual({ path, status: 409, names: true });
    }
    // The refused deletions left the end user and the device as they were.
    expect((await t.call("GET", `/v1/end-users/${endUser}`, { key })).body.deleted_at).toBeNull();
    expect((await t.call("GET", `/v1/devices/${device}`, { key })).status).toBe(200);
    await t.call("POST", `/v1/legal-holds/${onRecording.id}/release`, { key });
    expect((await t.call("DELETE", `/v1/devices/${device}`, { key })).status).toBe(204);
    expect((await t.call("DELETE", `/v1/end-users/${endUser}`, { key })).status).toBe(204);
  });

  test("lists, gets and validates holds; other projects and confined keys cannot reach them", async () => {
    const { t, tenant, key, endUser, recording, hold } = await heldApp();
    const rec = await recording();
    const first = await hold({ recording_id: rec });
    const second = await hold({ end_user_id: endUser });
    await t.call("POST", `/v1/legal-holds/${first.id}/release`, { key });

    const all = await t.call("GET", "/v1/legal-holds?limit=1", { key });
    expect(all.body).toMatchObject({ has_more: true, total: 2, data: [{ id: second.id }] });
    expect((await t.call("GET", `/v1/legal-holds?cursor=${all.body.next_cursor}`, { key })).body.data.map((h: { id: string }) => h.id)).toEqual([first.id]);
    expect((await t.call("GET", "/v1/legal-holds?status=active", { key })).body.data.map((h: { id: string }) => h.id)).toEqual([second.id]);
    expect((await t.call("GET", `/v1/legal-holds/${first.id}`, { key })).body.status).toBe("released");
    expect((await t.call("GET", "/v1/legal-holds/lh_unknown", { key })).status).toBe(404);

    const invalid = [
      { body: { matter: "No target" }, param: "end_user_id" },
      { body: { matter: "Two targets", end_user_id: endUser, recording_id: rec }, param: "recording_id" },
      { body: { matter: "", end_user_id: endUser }, param: "matter" },
      { body: { matter: "x", end_user_id: endUser, extra: 1 }, param: "extra" },
    ];
    for (const { body, param } of invalid) {
      const r = await t.call("POST", "/v1/legal-holds", { key, body });
      expect({ body, status: r.status, param: r.body.error.param }).toEqual({ body, status: 422, param });
    }
    const unknown = await t.call("POST", "/v1/legal-holds", { key, body: { matter: "x", recording_id: "rec_nope" } });
    expect([unknown.status, unknown.body.error.code, unknown.body.error.param]).toEqual([404, "resource_not_found", "recording_id"]);

    const other = makeTenant(t.deps);
    expect((await t.call("POST", "/v1/legal-holds", { key: other.test, body: { matter: "x", recording_id: rec } })).status).toBe(404);
    expect((await t.call("GET", `/v1/legal-holds/${second.id}`, { key: other.test })).status).toBe(404);
    expect((await t.call("POST", `/v1/legal-holds/${second.id}/release`, { key: other.test })).status).toBe(404);
    const confined = tenant.key("test", { endUserId: endUser });
    expect((await t.call("GET", "/v1/legal-holds", { key: confined })).status).toBe(403);
    const reader = tenant.key("test", { scopes: ["legal_holds:read"] });
    expect((await t.call("GET", "/v1/legal-holds", { key: reader })).status).toBe(200);
    expect((await t.call("POST", `/v1/legal-holds/${second.id}/release`, { key: reader })).status).toBe(403);
  });
});
