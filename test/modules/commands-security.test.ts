import { beforeAll, describe, expect, test } from "bun:test";
import { addFirmware } from "../../src/modules/firmware/releases";
import { makeTempDir, makeTenant, makeTestApp } from "../helpers";
import { boundDevice } from "./device-runtime-fixtures";
import { writeFileSync } from "node:fs";
import { join } from "node:path";

/** The security matrix of every device-runtime endpoint an API key calls (style.md: *.security). */
let t: Awaited<ReturnType<typeof makeTestApp>>;
let acme: ReturnType<typeof makeTenant>;
let other: ReturnType<typeof makeTenant>;
let device: Awaited<ReturnType<typeof boundDevice>>;
let cmdId: string;
let otaId: string;
let fwId: string;

beforeAll(async () => {
  t = await makeTestApp();
  acme = makeTenant(t.deps, "sec-acme");
  other = makeTenant(t.deps, "sec-other");
  device = await boundDevice(t, acme.test);
  await device.heartbeat();
  cmdId = (await t.call("POST", `/v1/devices/${device.id}/commands`, { key: acme.test, body: { type: "trigger_upload" } })).body.id;
  const file = join(makeTempDir(), "fw.bin");
  writeFileSync(file, "firmware");
  const org = t.deps.db.query<{ organization_id: string }, []>("SELECT organization_id FROM projects LIMIT 1").get()!.organization_id;
  fwId = addFirmware(t.deps.db, t.deps.config.dataDir, { organizationId: org, version: "9.0.0", model: "parley_pin", file, publish: true }, t.clock.now()).id;
  otaId = (await t.call("POST", `/v1/devices/${device.id}/ota`, { key: acme.test, body: { firmware_release_id: fwId } })).body.id;
});

type Case = { name: string; method: string; path: () => string; body?: () => unknown; scope: "devices:read" | "devices:write" };
const cases: Case[] = [
  { name: "create command", method: "POST", path: () => `/v1/devices/${device.id}/commands`, body: () => ({ type: "trigger_upload" }), scope: "devices:write" },
  { name: "list commands", method: "GET", path: () => `/v1/devices/${device.id}/commands`, scope: "devices:read" },
  { name: "get command", method: "GET", path: () => `/v1/devices/${device.id}/commands/${cmdId}`, scope: "devices:read" },
  { name: "cancel command", method: "POST", path: () => `/v1/devices/${device.id}/commands/${cmdId}/cancel`, scope: "devices:write" },
  { name: "reset", method: "POST", path: () => `/v1/devices/${device.id}/reset`, scope: "devices:write" },
  { name: "wifi grant", method: "POST", path: () => `/v1/devices/${device.id}/wifi-config/grant`, body: () => ({}), scope: "devices:write" },
  {
    name: "deprovision grant",
    method: "POST",
    path: () => `/v1/devices/${device.id}/deprovision/grant`,
    body: () => ({ nonce: "n".repeat(16) }),
    scope: "devices:write",
  },
  { name: "assign ota", method: "POST", path: () => `/v1/devices/${device.id}/ota`, body: () => ({ firmware_release_id: fwId }), scope: "devices:write" },
  { name: "list ota", method: "GET", path: () => `/v1/devices/${device.id}/ota`, scope: "devices:read" },
  { name: "get ota", method: "GET", path: () => `/v1/devices/${device.id}/ota/${otaId}`, scope: "devices:read" },
  { name: "cancel ota", method: "POST", path: () => `/v1/devices/${device.id}/ota/${otaId}/cancel`, scope: "devices:write" },
];

describe("device runtime security matrix", () => {
  test.each(cases)("$name: another project's key gets 404", async (c) => {
    const r = await t.call(c.method, c.path(), { key: other.test, body: c.body?.() });
    expect(r.status).toBe(404);
  });

  test.each(cases)("$name: the other mode's key gets 404", async (c) => {
    const r = await t.call(c.method, c.path(), { key: acme.live, body: c.body?.() });
    expect(r.status).toBe(404);
  });

  test.each(cases)("$name: a restricted key without $scope gets 403", async (c) => {
    const wrong = c.scope === "devices:read" ? ["devices:write"] : ["devices:read"];
    const r = await t.call(c.method, c.path(), { key: acme.key("test", { scopes: wrong }), body: c.body?.() });
    expect(r.status).toBe(403);
    expect(r.body.error.code).toBe("forbidden");
  });

  test.each(cases)("$name: an end-user-scoped key of another end user gets 404", async (c) => {
    const stranger = (await t.call("POST", "/v1/end-users", { key: acme.test, body: {} })).body.id;
    const r = await t.call(c.method, c.path(), { key: acme.key("test", { endUserId: stranger }), body: c.body?.() });
    expect(r.status).toBe(404);
  });

  // Spec 5 rule 4: none of these is among the five device-token endpoints, even for its own device.
  test.each(cases)("$name: the device's own token gets 403", async (c) => {
    const r = await t.call(c.method, c.path(), { key: device.token, body: c.body?.() });
    expect(r.status).toBe(403);
    expect(r.body.error.code).toBe("forbidden");
  });

  test.each(cases)("$name: no credential is 401", async (c) => {
    expect((await t.call(c.method, c.path(), { body: c.body?.() })).status).toBe(401);
  });

  test("the device's own end user's scoped key reaches it", async () => {
    const r = await t.call("GET", `/v1/devices/${device.id}/commands/${cmdId}`, { key: acme.key("test", { endUserId: device.endUserId }) });
    expect(r.status).toBe(200);
  });
});
