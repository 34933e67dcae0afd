import { beforeAll, describe, expect, test } from "bun:test";
import { writeOrganizationConfig } from "../../src/modules/config/service";
import { makeTenant, makeTestApp } from "../helpers";

let t: Awaited<ReturnType<typeof makeTestApp>>;
let acme: ReturnType<typeof makeTenant>;
let other: ReturnType<typeof makeTenant>;
let serial = 0;

beforeAll(async () => {
  t = await makeTestApp();
  acme = makeTenant(t.deps, "acme-devices");
  other = makeTenant(t.deps, "other-devices");
});

const DEVICE_FIELDS = [
  "battery_percent",
  "capabilities",
  "created_at",
  "end_user_id",
  "firmware_version",
  "id",
  "last_heartbeat_at",
  "mac_address",
  "metadata",
  "model",
  "name",
  "recording_state",
  "serial_number",
  "settings",
  "signal_strength_dbm",
  "status",
  "storage_total_mb",
  "storage_used_mb",
  "updated_at",
];

async function newDevice(key = acme.test, body: Record<string, unknown> = {}) {
  const r = await t.call("POST", "/v1/devices", { key, body: { serial_number: `SN-${++serial}`, model: "parley_pin", ...body } });
  expect(r.status).toBe(201);
  return r.body;
}

async function newEndUser(key = acme.test) {
  return (await t.call("POST", "/v1/end-users", { key, body: {} })).body;
}

async function boundDevice(key = acme.test) {
  const device = await newDevice(key);
  const user = await newEndUser(key);
  const r = await t.call("POST", `/v1/devices/${device.id}/bind`, { key, body: { end_user_id: user.id } });
  expect(r.status).toBe(200);
  return { device: r.body.device, token: r.body.device_token as string, user };
}

describe("devices: create, get, list", () => {
  test("create returns 201 with every field, defaults filled", async () => {
    const r = await t.call("POST", "/v1/devices", {
      key: acme.test,
      body: {
        serial_number: "PIN-0001",
        model: "parley_note",
        name: "Desk",
        firmware_version: "1.2.3",
        mac_address: "aa-bb-cc-dd-ee-ff",
        metadata: { room: "4" },
      },
    });
    expect(r.status).toBe(201);
    expect(Object.keys(r.body).sort()).toEqual(DEVICE_FIELDS);
    expect(r.body.id).toMatch(/^dev_/);
    expect(r.body).toMatchObject({
      serial_number: "PIN-0001",
      model: "parley_note",
      name: "Desk",
      firmware_version: "1.2.3",
      mac_address: "AA:BB:CC:DD:EE:FF",
      capabilities: 1,
      status: "unbound",
      end_user_id: null,
      battery_percent: null,
      last_heartbeat_at: null,
      recording_state: null,
      metadata: { room: "4" },
    });
    expect(r.body.settings.connection.upload_network_preference).toEqual(["wifi", "ble", "cellular"]);
    expect(r.body.settings.upload.streaming_chunk_kb).toBe(256);
    expect(await t.call("GET", `/v1/devices/${r.body.id}`, { key: acme.test })).toMatchObject({ status: 200, body: r.body });
  });

  test("duplicate serial is 409 resource_already_exists, per project and mode", async () => {
    const d = await newDevice();
    const again = await t.call("POST", "/v1/devices", { key: acme.test, body: { serial_number: d.serial_number, model: "parley_pin" } });
    expect(again.status).toBe(409);
    expect(again.body.error).toMatchObject({ code: "resource_already_exists", param: "serial_number" });
    expect((await t.call("POST", "/v1/devices", { key: acme.live, body: { serial_number: d.serial_number, model: "parley_pin" } })).status).toBe(201);
    expect((await t.call("POST", "/v1/devices", { key: other.test, body: { serial_number: d.serial_number, model: "parley_pin" } })).status).toBe(201);
  });

  test("list filters by serial_number, status, end_user_id and model", async () => {
    const { device, user } = await boundDevice();
    const note = await newDevice(acme.test, { model: "parley_note" });
    const bySerial = await t.call("GET", `/v1/devices?serial_number=${device.serial_number}`, { key: acme.test });
    expect(bySerial.body.data.map((d: any) => d.id)).toEqual([device.id]);
    expect(bySerial.body).toMatchObject({ has_more: false, total: 1 });
    const byUser = await t.call("GET", `/v1/devices?end_user_id=${user.id}`, { key: acme.test });
    expect(byUser.body.data.map((d: any) => d.id)).toEqual([device.id]);
    const bound = (await t.call("GET", "/v1/devices?status=bound&limit=100", { key: acme.test })).body.data;
    expect(bound.every((d: any) => d.status === "bound")).toBe(true);
    const notes = (await t.call("GET", "/v1/devices?model=parley_note&limit=100", { key: acme.test })).body.data;
    expect(notes.map((d: any) => d.id)).toContain(note.id);
    expect(notes.every((d: any) => d.model === "parley_note")).toBe(true);
    expect((await t.call("GET", `/v1/devices?serial_number=${device.serial_number}`, { key: other.test })).body.data).toEqual([]);
  });

  test("unknown device is 404 not_found 'Device not found'", async () => {
    const r = await t.call("GET", "/v1/devices/dev_nope", { key: acme.test });
    expect(r.status).toBe(404);
    expect(r.body.error).toMatchObject({ code: "not_found", message: "Device not found" });
  });
});

describe("devices: PATCH", () => {
  test("updates firmware_version and metadata; settings deep-merge, unspecified nested fields unchanged", async () => {
    const d = await newDevice();
    const first = await t.call("PATCH", `/v1/devices/${d.id}`, {
      key: acme.test,
      body: {
        firmware_version: "2.0.0",
        metadata: { a: 1 },
        settings: { connection: { power_management: { wifi_idle_timeout_seconds: 600 } }, upload: { streaming_chunk_kb: 512 } },
      },
    });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ firmware_version: "2.0.0", metadata: { a: 1 } });
    expect(first.body.settings.connection.power_management).toEqual({ wifi_idle_timeout_seconds: 600, cellular_idle_timeout_seconds: 180 });
    const second = await t.call("PATCH", `/v1/devices/${d.id}`, {
      key: acme.test,
      body: { settings: { connection: { power_management: { cellular_idle_timeout_seconds: -1 }, enabled_connections: { cellular: false } } } },
    });
    expect(second.body.firmware_version).toBe("2.0.0");
    expect(second.body.settings.connection.power_management).toEqual({ wifi_idle_timeout_seconds: 600, cellular_idle_timeout_seconds: -1 });
    expect(second.body.settings.connection.enabled_connections).toEqual({ wifi: true, cellular: false });
    expect(second.body.settings.upload.streaming_chunk_kb).toBe(512);
    expect((await t.call("GET", `/v1/devices/${d.id}`, { key: acme.test })).body.settings).toEqual(second.body.settings);
  });

  test("off_peak_hours: a partial window is completed; null switches it off", async () => {
    const d = await newDevice();
    const on = await t.call("PATCH", `/v1/devices/${d.id}`, {
      key: acme.test,
      body: { settings: { upload: { off_peak_hours: { enabled: true, timezone: "Europe/Paris" } } } },
    });
    expect(on.body.settings.upload.off_peak_hours).toEqual({ enabled: true, start: "00:00", end: "06:00", timezone: "Europe/Paris" });
    const moved = await t.call("PATCH", `/v1/devices/${d.id}`, { key: acme.test, body: { settings: { upload: { off_peak_hours: { start: "22:30" } } } } });
    expect(moved.body.settings.upload.off_peak_hours).toEqual({ enabled: true, start: "22:30", end: "06:00", timezone: "Europe/Paris" });
    const off = await t.call("PATCH", `/v1/devices/${d.id}`, { key: acme.test, body: { settings: { upload: { off_peak_hours: null } } } });
    expect(off.body.settings.upload.off_peak_hours).toBeNull();
  });

  test("unknown device is 404 'Device not found'; audio/power are not PATCH fields (422)", async () => {
    const r = await t.call("PATCH", "/v1/devices/dev_nope", { key: acme.test, body: { metadata: {} } });
    expect(r.status).toBe(404);
    expect(r.body.error).toMatchObject({ code: "not_found", message: "Device not found" });
    const d = await newDevice();
    const audio = await t.call("PATCH", `/v1/devices/${d.id}`, { key: acme.test, body: { settings: { audio: { codec: "aac" } } } });
    expect(audio.status).toBe(422);
    expect(audio.body.error.code).toBe("validation_error");
  });
});

describe("devices: DELETE (soft)", () => {
  test("a deleted device is gone from reads, its serial stays reserved and its token stops working", async () => {
    const { device, token } = await boundDevice();
    const del = await t.call("DELETE", `/v1/devices/${device.id}`, { key: acme.test });
    expect(del.status).toBe(204);
    expect((await t.call("GET", `/v1/devices/${device.id}`, { key: acme.test })).status).toBe(404);
    expect((await t.call("GET", `/v1/devices?serial_number=${device.serial_number}`, { key: acme.test })).body.data).toEqual([]);
    const reuse = await t.call("POST", "/v1/devices", { key: acme.test, body: { serial_number: device.serial_number, model: "parley_pin" } });
    expect(reuse.status).toBe(409);
    expect(reuse.body.error.code).toBe("resource_already_exists");
    expect((await t.call("POST", `/v1/devices/${device.id}/token/refresh`, { key: token })).status).toBe(401);
    expect((await t.call("DELETE", `/v1/devices/${device.id}`, { key: acme.test })).status).toBe(404);
  });
});

/** Stands in for the heartbeat module, which owns these columns' writes. */
function reportHeartbeat(id: string, at: string, channel: "wifi" | "cellular" | "bluetooth") {
  t.deps.db
    .query(
      `UPDATE devices SET battery_percent = 77, storage_used_mb = 10, storage_total_mb = 4096, signal_strength_dbm = -60,
       last_heartbeat_at = ?, last_seen_by = ?, last_synced_at = ?, last_synced_by = ?, recording_state = ? WHERE id = ?`,
    )
    .run(at, channel, at, channel, JSON.stringify({ device_state: "recording", flags: 9 }), id);
}

describe("devices: GET /state and GET /settings (spec 4.2)", () => {
  test("state before any heartbeat: every field present, null", async () => {
    const d = await newDevice();
    const r = await t.call("GET", `/v1/devices/${d.id}/state`, { key: acme.test });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      device_id: d.id,
      recording_state: null,
      battery_percent: null,
      storage_used_mb: null,
      storage_total_mb: null,
      last_heartbeat_at: null,
      last_synced_at: null,
      last_seen_by: null,
      last_synced_by: null,
    });
  });

  test("state after a heartbeat forwards recording_state verbatim", async () => {
    const d = await newDevice();
    const at = t.clock.now().toISOString();
    reportHeartbeat(d.id, at, "cellular");
    const r = await t.call("GET", `/v1/devices/${d.id}/state`, { key: acme.test });
    expect(r.body).toEqual({
      device_id: d.id,
      recording_state: { device_state: "recording", flags: 9 },
      battery_percent: 77,
      storage_used_mb: 10,
      storage_total_mb: 4096,
      last_heartbeat_at: at,
      last_synced_at: at,
      last_seen_by: "cellular",
      last_synced_by: "cellular",
    });
    expect((await t.call("GET", "/v1/devices/dev_nope/state", { key: acme.test })).status).toBe(404);
  });

  test("settings view: upload/audio/power with defaults, and current_status from the last contact", async () => {
    const d = await newDevice();
    const before = await t.call("GET", `/v1/devices/${d.id}/settings`, { key: acme.test });
    expect(before.status).toBe(200);
    expect(before.body).toEqual({
      device_id: d.id,
      settings: {
        upload: {
          mode: "auto",
          streaming_enabled: false,
          upload_delay_minutes: 0,
          daily_data_limit_mb: 0,
          allow_roaming: false,
          pause_on_low_battery: true,
          off_peak_hours: { enabled: false, start: null, end: null, timezone: null },
        },
        audio: { codec: "opus", sample_rate_khz: 16, bitrate_kbps: 32 },
        power: { auto_sleep_minutes: 30, low_battery_threshold_percent: 20 },
      },
      current_status: {
        network_type: "offline",
        signal_strength_dbm: null,
        is_roaming: null,
        data_used_today_mb: null,
        battery_percent: null,
        storage_used_mb: null,
        storage_total_mb: null,
      },
      updated_at: d.updated_at,
    });
    reportHeartbeat(d.id, t.clock.now().toISOString(), "cellular");
    const live = (await t.call("GET", `/v1/devices/${d.id}/settings`, { key: acme.test })).body;
    expect(live.current_status).toMatchObject({ network_type: "4g", signal_strength_dbm: -60, battery_percent: 77 });
    reportHeartbeat(d.id, t.clock.now().toISOString(), "bluetooth");
    expect((await t.call("GET", `/v1/devices/${d.id}/settings`, { key: acme.test })).body.current_status.network_type).toBe("ble");
    t.clock.advance(15 * 60 * 1000);
    expect((await t.call("GET", `/v1/devices/${d.id}/settings`, { key: acme.test })).body.current_status.network_type).toBe("offline");
    expect((await t.call("GET", "/v1/devices/dev_nope/settings", { key: acme.test })).status).toBe(404);
  });

  test("settings updated_at is the latest change of the device row and of every configuration level that applies", async () => {
    const tenant = makeTenant(t.deps, "settings-levels");
    const user = (await t.call("POST", "/v1/end-users", { key: tenant.test, body: {} })).body;
    const d = (await t.call("POST", "/v1/devices", { key: tenant.test, body: { serial_number: "LVL-1", model: "parley_pin" } })).body;
    const view = async () => (await t.call("GET", `/v1/devices/${d.id}/settings`, { key: tenant.test })).body;
    const later = () => {
      t.clock.advance(60_000);
      return t.clock.now().toISOString();
    };
    const bindAt = later();
    await t.call("POST", `/v1/devices/${d.id}/bind`, { key: tenant.test, body: { end_user_id: user.id } });
    expect((await view()).updated_at).toBe(bindAt);

    const projectAt = later();
    await t.call("PUT", "/v1/config/project", { key: tenant.test, body: { settings: { audio: { codec: "aac" } } } });
    expect(await view()).toMatchObject({ settings: { audio: { codec: "aac" } }, updated_at: projectAt });

    const endUserAt = later();
    await t.call("PUT", `/v1/config/end-users/${user.id}`, { key: tenant.test, body: { settings: { power: { auto_sleep_minutes: 5 } } } });
    expect(await view()).toMatchObject({ settings: { power: { auto_sleep_minutes: 5 } }, updated_at: endUserAt });

    const orgAt = later();
    writeOrganizationConfig(t.deps.db, tenant.project.organization_id, { settings: { audio: { bitrate_kbps: 64 } } }, t.clock.now());
    try {
      expect(await view()).toMatchObject({ settings: { audio: { bitrate_kbps: 64 } }, updated_at: orgAt });
    } finally {
      writeOrganizationConfig(t.deps.db, tenant.project.organization_id, null, t.clock.now());
    }
  });
});
