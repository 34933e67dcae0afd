import { beforeAll, describe, expect, test } from "bun:test";
import { makeTenant, makeTestApp } from "../helpers";
import { boundDevice } from "./device-runtime-fixtures";

let t: Awaited<ReturnType<typeof makeTestApp>>;
let acme: ReturnType<typeof makeTenant>;
let deviceId: string;
let serial = 0;

beforeAll(async () => {
  t = await makeTestApp();
  acme = makeTenant(t.deps, "acme-validation");
  deviceId = (await t.call("POST", "/v1/devices", { key: acme.test, body: { serial_number: "V-0", model: "parley_pin" } })).body.id;
});

const conn = (c: Record<string, unknown>) => ({ settings: { connection: c } });
const pm = (p: Record<string, unknown>) => conn({ power_management: p });
const up = (u: Record<string, unknown>) => ({ settings: { upload: u } });
const offPeak = (o: unknown) => up({ off_peak_hours: o });

/** [body, param it must name] for every rule of spec 2.4 and 4.2. */
const invalid: [string, unknown, string][] = [
  ["idle timeout -2", pm({ wifi_idle_timeout_seconds: -2 }), "settings.connection.power_management.wifi_idle_timeout_seconds"],
  ["idle timeout 1", pm({ wifi_idle_timeout_seconds: 1 }), "settings.connection.power_management.wifi_idle_timeout_seconds"],
  ["idle timeout 9", pm({ cellular_idle_timeout_seconds: 9 }), "settings.connection.power_management.cellular_idle_timeout_seconds"],
  ["idle timeout 2541", pm({ cellular_idle_timeout_seconds: 2541 }), "settings.connection.power_management.cellular_idle_timeout_seconds"],
  ["idle timeout 10.5", pm({ wifi_idle_timeout_seconds: 10.5 }), "settings.connection.power_management.wifi_idle_timeout_seconds"],
  ["idle timeout as string", pm({ wifi_idle_timeout_seconds: "180" }), "settings.connection.power_management.wifi_idle_timeout_seconds"],
  ["duplicate network", conn({ upload_network_preference: ["wifi", "wifi"] }), "settings.connection.upload_network_preference"],
  ["unknown network", conn({ upload_network_preference: ["wifi", "lte"] }), "settings.connection.upload_network_preference.1"],
  ["empty preference", conn({ upload_network_preference: [] }), "settings.connection.upload_network_preference"],
  ["enabled_connections not boolean", conn({ enabled_connections: { wifi: "yes" } }), "settings.connection.enabled_connections.wifi"],
  ["heartbeat flag unknown key", conn({ heartbeat_enabled_connections: { bluetooth: false } }), "settings.connection.heartbeat_enabled_connections.bluetooth"],
  ["streaming_chunk_kb 63", up({ streaming_chunk_kb: 63 }), "settings.upload.streaming_chunk_kb"],
  ["streaming_chunk_kb 1025", up({ streaming_chunk_kb: 1025 }), "settings.upload.streaming_chunk_kb"],
  ["daily_data_limit_mb -1", up({ daily_data_limit_mb: -1 }), "settings.upload.daily_data_limit_mb"],
  ["daily_data_limit_mb 10001", up({ daily_data_limit_mb: 10001 }), "settings.upload.daily_data_limit_mb"],
  ["allow_roaming not boolean", up({ allow_roaming: 1 }), "settings.upload.allow_roaming"],
  ["streaming_enabled not boolean", up({ streaming_enabled: "true" }), "settings.upload.streaming_enabled"],
  ["pause_on_low_battery not boolean", up({ pause_on_low_battery: null }), "settings.upload.pause_on_low_battery"],
  ["off-peak start 24:00", offPeak({ start: "24:00" }), "settings.upload.off_peak_hours.start"],
  ["off-peak start 7:00", offPeak({ start: "7:00" }), "settings.upload.off_peak_hours.start"],
  ["off-peak end 12:60", offPeak({ end: "12:60" }), "settings.upload.off_peak_hours.end"],
  ["off-peak bad time zone", offPeak({ timezone: "Mars/Olympus" }), "settings.upload.off_peak_hours.timezone"],
  ["off-peak enabled not boolean", offPeak({ enabled: "on" }), "settings.upload.off_peak_hours.enabled"],
  ["upload.mode is not a PATCH field", up({ mode: "auto" }), "settings.upload.mode"],
  ["unknown settings block", { settings: { display: {} } }, "settings.display"],
  ["firmware_version 33 chars", { firmware_version: "1".repeat(33) }, "firmware_version"],
  ["metadata not an object", { metadata: [1] }, "metadata"],
];

describe("PATCH /devices/{id}: every settings rule", () => {
  test.each(invalid)("%s is 422 validation_error", async (_name, body, param) => {
    const r = await t.call("PATCH", `/v1/devices/${deviceId}`, { key: acme.test, body });
    expect(r.status).toBe(422);
    expect(r.body.error).toMatchObject({ code: "validation_error", param });
  });

  const valid: [string, unknown, (s: any) => unknown, unknown][] = [
    ["idle timeout -1", pm({ wifi_idle_timeout_seconds: -1 }), (s) => s.connection.power_management.wifi_idle_timeout_seconds, -1],
    ["idle timeout 0", pm({ wifi_idle_timeout_seconds: 0 }), (s) => s.connection.power_management.wifi_idle_timeout_seconds, 0],
    ["idle timeout 10", pm({ wifi_idle_timeout_seconds: 10 }), (s) => s.connection.power_management.wifi_idle_timeout_seconds, 10],
    ["idle timeout 2540", pm({ cellular_idle_timeout_seconds: 2540 }), (s) => s.connection.power_management.cellular_idle_timeout_seconds, 2540],
    ["streaming_chunk_kb 64", up({ streaming_chunk_kb: 64 }), (s) => s.upload.streaming_chunk_kb, 64],
    ["streaming_chunk_kb 1024", up({ streaming_chunk_kb: 1024 }), (s) => s.upload.streaming_chunk_kb, 1024],
    ["daily_data_limit_mb 0 (unlimited)", up({ daily_data_limit_mb: 0 }), (s) => s.upload.daily_data_limit_mb, 0],
    ["daily_data_limit_mb 10000", up({ daily_data_limit_mb: 10000 }), (s) => s.upload.daily_data_limit_mb, 10000],
    [
      "preference reordered and shortened",
      conn({ upload_network_preference: ["cellular", "wifi"] }),
      (s) => s.connection.upload_network_preference,
      ["cellular", "wifi"],
    ],
    [
      "both direct channels off",
      conn({ enabled_connections: { wifi: false, cellular: false } }),
      (s) => s.connection.enabled_connections,
      { wifi: false, cellular: false },
    ],
    [
      "heartbeat flags",
      conn({ heartbeat_enabled_connections: { wifi: false } }),
      (s) => s.connection.heartbeat_enabled_connections,
      { wifi: false, cellular: true },
    ],
    [
      "off-peak 23:59 to 00:00",
      offPeak({ enabled: true, start: "23:59", end: "00:00", timezone: "America/Sao_Paulo" }),
      (s) => s.upload.off_peak_hours,
      { enabled: true, start: "23:59", end: "00:00", timezone: "America/Sao_Paulo" },
    ],
    ["firmware_version 32 chars", { firmware_version: "2".repeat(32) }, () => null, null],
  ];
  test.each(valid)("%s is accepted", async (_name, body, pick, expected) => {
    const r = await t.call("PATCH", `/v1/devices/${deviceId}`, { key: acme.test, body });
    expect(r.status).toBe(200);
    if (expected !== null) expect(pick(r.body.settings)).toEqual(expected);
  });

  test("a rejected PATCH changes nothing", async () => {
    const before = (await t.call("GET", `/v1/devices/${deviceId}`, { key: acme.test })).body;
    await t.call("PATCH", `/v1/devices/${deviceId}`, { key: acme.test, body: { firmware_version: "9.9.9", settings: { upload: { streaming_chunk_kb: 1 } } } });
    expect((await t.call("GET", `/v1/devices/${deviceId}`, { key: acme.test })).body).toEqual(before);
  });
});

describe("POST /devices: body rules (decisions.md)", () => {
  const base = () => ({ serial_number: `VS-${++serial}`, model: "parley_pin" });
  test.each([
    ["missing serial_number", { serial_number: undefined }, "serial_number"],
    ["empty serial_number", { serial_number: "" }, "serial_number"],
    ["serial_number of 65 chars", { serial_number: "S".repeat(65) }, "serial_number"],
    ["missing model", { model: undefined }, "model"],
    ["unknown model", { model: "svc_pin" }, "model"],
    ["firmware_version of 33 chars", { firmware_version: "1".repeat(33) }, "firmware_version"],
    ["capabilities 8", { capabilities: 8 }, "capabilities"],
    ["capabilities -1", { capabilities: -1 }, "capabilities"],
    ["capabilities 1.5", { capabilities: 1.5 }, "capabilities"],
    ["mac_address malformed", { mac_address: "AA:BB:CC" }, "mac_address"],
  ])("%s is 422", async (_name, patch, param) => {
    const r = await t.call("POST", "/v1/devices", { key: acme.test, body: { ...base(), ...patch } });
    expect(r.status).toBe(422);
    expect(r.body.error).toMatchObject({ code: "validation_error", param });
  });

  test("a 64-character serial and capabilities 0x07 are accepted; capabilities default to 0x01", async () => {
    const full = await t.call("POST", "/v1/devices", { key: acme.test, body: { serial_number: "S".repeat(64), model: "parley_note", capabilities: 7 } });
    expect(full.status).toBe(201);
    expect(full.body.capabilities).toBe(7);
    expect((await t.call("POST", "/v1/devices", { key: acme.test, body: base() })).body.capabilities).toBe(1);
  });
});

describe("unknown top-level fields are 422 naming the field on every API-key write body", () => {
  // [method, path ({id} is the device), body, the unknown field]
  const cases: [string, string, Record<string, unknown>, string][] = [
    ["PATCH", "/v1/devices/{id}", { status: "unbound" }, "status"],
    ["POST", "/v1/devices", { serial_number: "VS-UNKNOWN", model: "parley_pin", status: "bound" }, "status"],
    ["POST", "/v1/devices/{id}/bind", { end_user_id: "eu_x", device_token: "dtok_mine" }, "device_token"],
    ["POST", "/v1/devices/{id}/commands", { type: "trigger_upload", priority: 1 }, "priority"],
    ["POST", "/v1/devices/{id}/ota", { firmware_release_id: "fw_x", force: true }, "force"],
    ["POST", "/v1/devices/{id}/wifi-config/grant", { expires_in_seconds: 900, ssid: "home" }, "ssid"],
    ["POST", "/v1/devices/{id}/deprovision/grant", { nonce: "n".repeat(16), reason: "x" }, "reason"],
  ];
  test.each(cases)("%s %s", async (method, path, body, param) => {
    const before = (await t.call("GET", `/v1/devices/${deviceId}`, { key: acme.test })).body;
    const r = await t.call(method, path.replace("{id}", deviceId), { key: acme.test, body });
    expect(r.status).toBe(422);
    expect(r.body.error).toMatchObject({ code: "validation_error", param });
    expect(r.body.error.message).toContain(param);
    expect((await t.call("GET", `/v1/devices/${deviceId}`, { key: acme.test })).body).toEqual(before);
  });

  test("the device-facing heartbeat still ignores fields newer firmware may send", async () => {
    const d = await boundDevice(t, acme.test);
    const r = await d.heartbeat({ battery_percent: 80, thermal_state: "nominal" });
    expect(r.status).toBe(200);
  });
});
