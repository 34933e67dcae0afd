import { beforeAll, describe, expect, test } from "bun:test";
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
      body: { serial_number: "PIN-0001", model: "parley_note", name: "Desk", firmware_version: "1.2.3", mac_address: "aa-bb-cc-dd-ee-ff", metadata: { room: "4" } },
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

describe("devices: binding (spec 3.1)", () => {
  test("bind issues a dtok_ token once; unbind revokes it; unbind again is 400", async () => {
    const { device, token, user } = await boundDevice();
    expect(token).toMatch(/^dtok_/);
    expect(device).toMatchObject({ status: "bound", end_user_id: user.id });
    expect((await t.call("POST", `/v1/devices/${device.id}/token/refresh`, { key: token })).status).toBe(200);
    const unbound = await t.call("POST", `/v1/devices/${device.id}/unbind`, { key: acme.test });
    expect(unbound.status).toBe(200);
    expect(unbound.body).toMatchObject({ status: "unbound", end_user_id: null });
    const again = await t.call("POST", `/v1/devices/${device.id}/unbind`, { key: acme.test });
    expect(again.status).toBe(400);
    expect(again.body.error.code).toBe("bad_request");
  });
});
