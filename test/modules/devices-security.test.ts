import { beforeAll, describe, expect, test } from "bun:test";
import { makeTenant, makeTestApp } from "../helpers";

let t: Awaited<ReturnType<typeof makeTestApp>>;
let acme: ReturnType<typeof makeTenant>;
let other: ReturnType<typeof makeTenant>;
let device: any;
let user: any;
let bob: any;
let bobsDevice: any;

beforeAll(async () => {
  t = await makeTestApp();
  acme = makeTenant(t.deps, "acme-security");
  other = makeTenant(t.deps, "other-security");
  user = (await t.call("POST", "/v1/end-users", { key: acme.test, body: {} })).body;
  bob = (await t.call("POST", "/v1/end-users", { key: acme.test, body: {} })).body;
  device = (await t.call("POST", "/v1/devices", { key: acme.test, body: { serial_number: "SEC-1", model: "parley_pin" } })).body;
  await t.call("POST", `/v1/devices/${device.id}/bind`, { key: acme.test, body: { end_user_id: user.id } });
  bobsDevice = (await t.call("POST", "/v1/devices", { key: acme.test, body: { serial_number: "SEC-2", model: "parley_pin" } })).body;
  await t.call("POST", `/v1/devices/${bobsDevice.id}/bind`, { key: acme.test, body: { end_user_id: bob.id } });
});

type Route = { method: string; path: (id: string) => string; scope: string; body?: () => unknown };
const routes: Route[] = [
  { method: "GET", path: (id) => `/v1/devices/${id}`, scope: "devices:read" },
  { method: "GET", path: (id) => `/v1/devices/${id}/state`, scope: "devices:read" },
  { method: "GET", path: (id) => `/v1/devices/${id}/settings`, scope: "devices:read" },
  { method: "PATCH", path: (id) => `/v1/devices/${id}`, scope: "devices:write", body: () => ({ metadata: { x: 1 } }) },
  { method: "POST", path: (id) => `/v1/devices/${id}/unbind`, scope: "devices:write" },
  { method: "POST", path: (id) => `/v1/devices/${id}/bind`, scope: "devices:write", body: () => ({ end_user_id: user.id }) },
  { method: "DELETE", path: (id) => `/v1/devices/${id}`, scope: "devices:write" },
  { method: "GET", path: (id) => `/v1/config/devices/${id}`, scope: "config:read" },
  { method: "PUT", path: (id) => `/v1/config/devices/${id}`, scope: "config:write", body: () => ({ auto_summarize: false }) },
  { method: "DELETE", path: (id) => `/v1/config/devices/${id}`, scope: "config:write" },
];
const name = (r: Route) => `${r.method} ${r.path("{id}")}`;

describe("devices security matrix", () => {
  test.each(routes.map((r) => [name(r), r] as const))("%s: other project and other mode are 404", async (_n, r) => {
    for (const key of [other.test, acme.live]) {
      const res = await t.call(r.method, r.path(device.id), { key, body: r.body?.() });
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe("not_found");
    }
  });

  test.each(routes.map((r) => [name(r), r] as const))("%s: a restricted key without the scope is 403", async (_n, r) => {
    const wrong = r.scope.endsWith(":read") ? r.scope.replace(":read", ":write") : r.scope.replace(":write", ":read");
    const key = acme.key("test", { scopes: ["end_users:read", "recordings:read", wrong] });
    const res = await t.call(r.method, r.path(device.id), { key, body: r.body?.() });
    expect(res.status).toBe(403);
    expect(res.body.error).toMatchObject({ code: "forbidden" });
    expect(res.body.error.message).toContain(r.scope);
  });

  test.each(routes.map((r) => [name(r), r] as const))("%s: an end-user-scoped key cannot reach another end user's device (404)", async (_n, r) => {
    const key = acme.key("test", { endUserId: user.id });
    const res = await t.call(r.method, r.path(bobsDevice.id), { key, body: r.body?.() });
    // Deleting is refused to end-user-scoped keys outright, before any lookup.
    expect(res.status).toBe(name(r) === "DELETE /v1/devices/{id}" ? 403 : 404);
    expect((await t.call("GET", `/v1/devices/${bobsDevice.id}`, { key: acme.test })).body).toMatchObject({ status: "bound", end_user_id: bob.id });
  });

  test.each(routes.map((r) => [name(r), r] as const))("%s: no credential is 401", async (_n, r) => {
    const res = await t.call(r.method, r.path(device.id), { body: r.body?.() });
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe("unauthorized");
  });

  test("the scope is enough: devices:read reads, devices:write writes", async () => {
    const reader = acme.key("test", { scopes: ["devices:read"] });
    expect((await t.call("GET", `/v1/devices/${device.id}`, { key: reader })).status).toBe(200);
    expect((await t.call("GET", "/v1/devices", { key: reader })).status).toBe(200);
    const writer = acme.key("test", { scopes: ["devices:write"] });
    expect((await t.call("PATCH", `/v1/devices/${device.id}`, { key: writer, body: { metadata: { ok: true } } })).status).toBe(200);
    expect((await t.call("POST", "/v1/devices", { key: writer, body: { serial_number: "SEC-W", model: "parley_pin" } })).status).toBe(201);
    expect((await t.call("POST", "/v1/devices", { key: reader, body: { serial_number: "SEC-R", model: "parley_pin" } })).status).toBe(403);
    expect((await t.call("GET", "/v1/devices", { key: writer })).status).toBe(403);
  });

  test("lists never show other projects' or modes' devices", async () => {
    for (const key of [other.test, acme.live]) {
      const r = await t.call("GET", `/v1/devices?serial_number=${device.serial_number}`, { key });
      expect(r.body).toMatchObject({ data: [], has_more: false, total: 0 });
    }
  });

  test("an end-user-scoped key sees only its own devices and cannot register or delete", async () => {
    const key = acme.key("test", { endUserId: user.id });
    expect((await t.call("GET", `/v1/devices/${device.id}`, { key })).status).toBe(200);
    const list = await t.call("GET", "/v1/devices?limit=100", { key });
    expect(list.body.data.map((d: any) => d.id)).toEqual([device.id]);
    const spying = await t.call("GET", `/v1/devices?end_user_id=${bob.id}`, { key });
    expect(spying.status).toBe(403);
    expect((await t.call("POST", "/v1/devices", { key, body: { serial_number: "SEC-EU", model: "parley_pin" } })).status).toBe(403);
    expect((await t.call("DELETE", `/v1/devices/${device.id}`, { key })).status).toBe(403);
    const fresh = (await t.call("POST", "/v1/devices", { key: acme.test, body: { serial_number: "SEC-3", model: "parley_pin" } })).body;
    const bindBob = await t.call("POST", `/v1/devices/${fresh.id}/bind`, { key, body: { end_user_id: bob.id } });
    expect(bindBob.status).toBe(403);
    expect(bindBob.body.error).toMatchObject({ code: "forbidden", param: "end_user_id" });
  });

  test("an end-user-scoped key can unbind its own device, which then leaves its view", async () => {
    const own = (await t.call("POST", "/v1/devices", { key: acme.test, body: { serial_number: "SEC-4", model: "parley_pin" } })).body;
    await t.call("POST", `/v1/devices/${own.id}/bind`, { key: acme.test, body: { end_user_id: user.id } });
    const key = acme.key("test", { endUserId: user.id });
    const r = await t.call("POST", `/v1/devices/${own.id}/unbind`, { key });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ id: own.id, status: "unbound", end_user_id: null });
    expect((await t.call("GET", `/v1/devices/${own.id}`, { key })).status).toBe(404);
  });
});
