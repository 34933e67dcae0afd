import { beforeAll, describe, expect, test } from "bun:test";
import { makeTenant, makeTestApp } from "../helpers";
import { boundDevice } from "./device-runtime-fixtures";

let t: Awaited<ReturnType<typeof makeTestApp>>;
let acme: ReturnType<typeof makeTenant>;

beforeAll(async () => {
  t = await makeTestApp();
  acme = makeTenant(t.deps, "hb-acme");
});

function events(type: string, deviceId: string) {
  return t.deps.db
    .query<{ data: string; project_id: string; mode: string }, [string]>("SELECT data, project_id, mode FROM events WHERE type = ? ORDER BY created_at, id")
    .all(type)
    .map((e) => ({ ...JSON.parse(e.data), _mode: e.mode }))
    .filter((e) => e.id === deviceId);
}

describe("heartbeat: what the device reports", () => {
  test("updates the heartbeat columns and forwards recording_state verbatim; absent fields are kept", async () => {
    const d = await boundDevice(t, acme.test);
    const state = { device_state: "recording", recording_id: "r-9", flags: 0x09, connection_type: ["wifi"], custom_vendor_field: { a: [1, 2] } };
    const r = await d.heartbeat({
      battery_percent: 77,
      storage_used_mb: 120,
      storage_total_mb: 4096,
      signal_strength_dbm: -61,
      firmware_version: "1.4.2",
      recording_state: state,
      channel: "cellular",
    });
    expect(r.status).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(["commands", "ota", "server_time"]);
    expect(r.body).toMatchObject({ commands: [], ota: null, server_time: t.clock.now().toISOString() });
    const device = (await t.call("GET", `/v1/devices/${d.id}`, { key: acme.test })).body;
    expect(device).toMatchObject({
      battery_percent: 77,
      storage_used_mb: 120,
      storage_total_mb: 4096,
      signal_strength_dbm: -61,
      firmware_version: "1.4.2",
      recording_state: state,
      last_heartbeat_at: t.clock.now().toISOString(),
    });
    const at = t.clock.now().toISOString();
    t.clock.advance(5_000);
    await d.heartbeat({ battery_percent: 76, channel: "bluetooth" });
    const st = (await t.call("GET", `/v1/devices/${d.id}/state`, { key: acme.test })).body;
    expect(st).toMatchObject({ battery_percent: 76, storage_used_mb: 120, recording_state: state, last_seen_by: "bluetooth", last_synced_by: "bluetooth" });
    expect(st.last_heartbeat_at > at).toBe(true);
    expect(st.last_synced_at).toBe(st.last_heartbeat_at);
  });

  test.each([
    [{ battery_percent: 101 }, "battery_percent"],
    [{ battery_percent: -1 }, "battery_percent"],
    [{ battery_percent: 50.5 }, "battery_percent"],
    [{ storage_used_mb: -1 }, "storage_used_mb"],
    [{ signal_strength_dbm: 5 }, "signal_strength_dbm"],
    [{ firmware_version: "x".repeat(33) }, "firmware_version"],
    [{ channel: "lora" }, "channel"],
    [{ recording_state: "idle" }, "recording_state"],
    [{ command_results: [{ command_id: "cmd_x", status: "done" }] }, "command_results.0.status"],
    [{ ota_status: { ota_id: "ota_x", status: "bricked" } }, "ota_status.status"],
  ])("%j is 422 naming %s", async (body, param) => {
    const d = await boundDevice(t, acme.test);
    const r = await d.heartbeat(body);
    expect(r.status).toBe(422);
    expect(r.body.error).toMatchObject({ code: "validation_error", param });
  });

  test("heartbeats sent at once (one group commit) each land on their own device, a pending command goes to its device only", async () => {
    const fleet = await Promise.all(Array.from({ length: 6 }, () => boundDevice(t, acme.test)));
    await fleet[2]!.heartbeat(); // commands are admitted only for a device heard from in the last 60 s
    const cmd = await t.call("POST", `/v1/devices/${fleet[2]!.id}/commands`, { key: acme.test, body: { type: "trigger_upload" } });
    expect(cmd.status).toBe(201);
    const replies = await Promise.all(fleet.map((d, i) => d.heartbeat({ battery_percent: 40 + i, recording_state: { device_state: "idle", n: i } })));
    expect(replies.map((r) => r.status)).toEqual(fleet.map(() => 200));
    expect(replies.map((r) => r.body.commands.map((c: { id: string }) => c.id))).toEqual(fleet.map((_, i) => (i === 2 ? [cmd.body.id] : [])));
    for (const [i, d] of fleet.entries()) {
      const st = (await t.call("GET", `/v1/devices/${d.id}/state`, { key: acme.test })).body;
      expect(st).toMatchObject({ battery_percent: 40 + i, recording_state: { device_state: "idle", n: i } });
    }
  });
});

describe("heartbeat: device.low_battery (spec 6)", () => {
  test("fires once per dip below 20 with the spec's fields, re-arms at 20 or more", async () => {
    const d = await boundDevice(t, acme.test);
    await d.heartbeat({ battery_percent: 20 });
    expect(events("device.low_battery", d.id)).toHaveLength(0);
    await d.heartbeat({ battery_percent: 19 });
    await d.heartbeat({ battery_percent: 12 });
    await d.heartbeat({}); // no battery reading: no change
    const first = events("device.low_battery", d.id);
    expect(first).toHaveLength(1);
    expect(first[0]).toEqual({ id: d.id, end_user_id: d.endUserId, battery_percent: 19, last_sync_at: t.clock.now().toISOString(), _mode: "test" });
    await d.heartbeat({ battery_percent: 20 });
    await d.heartbeat({ battery_percent: 18 });
    expect(events("device.low_battery", d.id).map((e) => e.battery_percent)).toEqual([19, 18]);
  });
});

describe("device.offline (spec 6)", () => {
  test("the periodic check reports a bound device silent 24 h once per outage", async () => {
    const d = await boundDevice(t, acme.test);
    await d.heartbeat();
    const last = t.clock.now().toISOString();
    t.clock.advance(24 * 3_600_000 - 1_000);
    await t.runTask("device-offline-check");
    expect(events("device.offline", d.id)).toHaveLength(0);
    t.clock.advance(3 * 3_600_000);
    await t.runTask("device-offline-check");
    await t.runTask("device-offline-check");
    expect(events("device.offline", d.id)).toEqual([{ id: d.id, end_user_id: d.endUserId, last_sync_at: last, hours_offline: 26, _mode: "test" }]);
    await d.heartbeat();
    t.clock.advance(25 * 3_600_000);
    await t.runTask("device-offline-check");
    expect(events("device.offline", d.id)).toHaveLength(2);
  });
});

describe("heartbeat: who may send it (spec 5 rule 4)", () => {
  test("only the device's own token: API keys, other devices' tokens and revoked tokens are refused", async () => {
    const d = await boundDevice(t, acme.test);
    const e = await boundDevice(t, acme.test);
    const viaKey = await t.call("POST", `/v1/devices/${d.id}/heartbeat`, { key: acme.test, body: {} });
    expect(viaKey.status).toBe(403);
    const viaOther = await t.call("POST", `/v1/devices/${d.id}/heartbeat`, { key: e.token, body: {} });
    expect(viaOther.status).toBe(403);
    expect((await t.call("POST", `/v1/devices/${d.id}/heartbeat`, { body: {} })).status).toBe(401);
    await t.call("POST", `/v1/devices/${d.id}/unbind`, { key: acme.test });
    expect((await d.heartbeat()).status).toBe(401);
  });

  test("a device token cannot call the command, reset, grant or OTA endpoints", async () => {
    const d = await boundDevice(t, acme.test);
    await d.heartbeat();
    for (const [method, path, body] of [
      ["POST", `/v1/devices/${d.id}/commands`, { type: "trigger_upload" }],
      ["GET", `/v1/devices/${d.id}/commands`, undefined],
      ["POST", `/v1/devices/${d.id}/reset`, undefined],
      ["POST", `/v1/devices/${d.id}/wifi-config/grant`, {}],
      ["POST", `/v1/devices/${d.id}/ota`, { firmware_release_id: "fw_x" }],
      ["GET", "/v1/firmware-releases", undefined],
    ] as const) {
      const r = await t.call(method, path, { key: d.token, body });
      expect([path, r.status]).toEqual([path, 403]);
    }
  });
});
