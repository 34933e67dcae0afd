import { beforeAll, describe, expect, test } from "bun:test";
import { makeTenant, makeTestApp } from "../helpers";

let t: Awaited<ReturnType<typeof makeTestApp>>;
let acme: ReturnType<typeof makeTenant>;
let other: ReturnType<typeof makeTenant>;

beforeAll(async () => {
  t = await makeTestApp();
  acme = makeTenant(t.deps, "acme");
  other = makeTenant(t.deps, "other");
});

describe("end users: happy path", () => {
  test("create returns 201 with every field of spec 2.2", async () => {
    const r = await t.call("POST", "/v1/end-users", {
      key: acme.test,
      body: { external_id: "u-1", name: "Ada", email: "ada@example.com", metadata: { tier: "gold" } },
    });
    expect(r.status).toBe(201);
    expect(r.body.id).toMatch(/^eu_/);
    expect(r.body).toMatchObject({ external_id: "u-1", name: "Ada", email: "ada@example.com", metadata: { tier: "gold" }, deleted_at: null });
    expect(Object.keys(r.body).sort()).toEqual(["created_at", "deleted_at", "email", "external_id", "id", "metadata", "name", "updated_at"]);
  });

  test("an empty body creates an end user with null fields", async () => {
    const r = await t.call("POST", "/v1/end-users", { key: acme.test, body: {} });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ external_id: null, name: null, email: null, metadata: {} });
  });

  test("get, patch (absent kept, null clears) and list by external_id", async () => {
    const created = (await t.call("POST", "/v1/end-users", { key: acme.test, body: { external_id: "u-2", name: "Bob", email: "bob@example.com" } })).body;
    expect((await t.call("GET", `/v1/end-users/${created.id}`, { key: acme.test })).body).toEqual(created);
    t.clock.advance(1000);
    const patched = await t.call("PATCH", `/v1/end-users/${created.id}`, { key: acme.test, body: { name: "Robert", email: null } });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ name: "Robert", email: null, external_id: "u-2" });
    expect(patched.body.updated_at > created.updated_at).toBe(true);
    const list = await t.call("GET", "/v1/end-users?external_id=u-2", { key: acme.test });
    expect(list.body.data.map((u: any) => u.id)).toEqual([created.id]);
    expect(list.body).toMatchObject({ has_more: false, total: 1 });
  });

  test("delete makes the end user read-only and releases its external_id", async () => {
    const u = (await t.call("POST", "/v1/end-users", { key: acme.test, body: { external_id: "u-3" } })).body;
    const del = await t.call("DELETE", `/v1/end-users/${u.id}`, { key: acme.test });
    expect(del.status).toBe(204);
    expect(del.body).toBeNull();
    const after = await t.call("GET", `/v1/end-users/${u.id}`, { key: acme.test });
    expect(after.body.deleted_at).not.toBeNull();
    expect((await t.call("PATCH", `/v1/end-users/${u.id}`, { key: acme.test, body: { name: "x" } })).body.error.code).toBe("resource_conflict");
    expect((await t.call("DELETE", `/v1/end-users/${u.id}`, { key: acme.test })).status).toBe(409);
    expect((await t.call("GET", "/v1/end-users?external_id=u-3", { key: acme.test })).body.data).toEqual([]);
    const reused = await t.call("POST", "/v1/end-users", { key: acme.test, body: { external_id: "u-3" } });
    expect(reused.status).toBe(201);
    expect(reused.body.id).not.toBe(u.id);
  });
});

describe("end users: deletion releases devices", () => {
  test("the end user's devices are unbound and their tokens stop working; recordings keep their end user", async () => {
    const user = (await t.call("POST", "/v1/end-users", { key: acme.test, body: {} })).body;
    const device = (await t.call("POST", "/v1/devices", { key: acme.test, body: { serial_number: "SN-DEL-1", model: "parley_pin" } })).body;
    const token = (await t.call("POST", `/v1/devices/${device.id}/bind`, { key: acme.test, body: { end_user_id: user.id } })).body.device_token;
    const rec = await t.call("POST", "/v1/recordings", { key: token, body: {} });
    expect(rec.status).toBe(201);

    expect((await t.call("DELETE", `/v1/end-users/${user.id}`, { key: acme.test })).status).toBe(204);
    expect((await t.call("GET", `/v1/devices/${device.id}`, { key: acme.test })).body).toMatchObject({ status: "unbound", end_user_id: null });
    expect((await t.call("POST", "/v1/recordings", { key: token, body: {} })).status).toBe(401);
    expect((await t.call("GET", `/v1/recordings/${rec.body.id}`, { key: acme.test })).body.end_user_id).toBe(user.id);
  });
});

describe("end users: errors", () => {
  test("duplicate external_id is 409 on create and on patch", async () => {
    await t.call("POST", "/v1/end-users", { key: acme.test, body: { external_id: "dup" } });
    const again = await t.call("POST", "/v1/end-users", { key: acme.test, body: { external_id: "dup" } });
    expect(again.status).toBe(409);
    expect(again.body.error).toMatchObject({ code: "resource_already_exists", param: "external_id" });
    const other = (await t.call("POST", "/v1/end-users", { key: acme.test, body: {} })).body;
    expect((await t.call("PATCH", `/v1/end-users/${other.id}`, { key: acme.test, body: { external_id: "dup" } })).status).toBe(409);
  });

  test.each([
    [{ email: "not-an-email" }, "email"],
    [{ external_id: "" }, "external_id"],
    [{ metadata: "x" }, "metadata"],
    [{ name: 42 }, "name"],
  ])("invalid body %j is 422 validation_error naming %s", async (body, param) => {
    const r = await t.call("POST", "/v1/end-users", { key: acme.test, body });
    expect(r.status).toBe(422);
    expect(r.body.error).toMatchObject({ code: "validation_error", param });
    expect(r.body.error.request_id).toMatch(/^req_/);
  });

  test("unknown id is 404 not_found", async () => {
    for (const [m, b] of [
      ["GET", undefined],
      ["PATCH", { name: "x" }],
      ["DELETE", undefined],
    ] as const) {
      const r = await t.call(m, "/v1/end-users/eu_nope", { key: acme.test, body: b });
      expect(r.status).toBe(404);
      expect(r.body.error.code).toBe("not_found");
    }
  });
});

describe("end users: security", () => {
  test("another project and the other mode cannot see the end user", async () => {
    const u = (await t.call("POST", "/v1/end-users", { key: acme.test, body: { external_id: "iso" } })).body;
    for (const key of [other.test, other.live, acme.live]) {
      expect((await t.call("GET", `/v1/end-users/${u.id}`, { key })).status).toBe(404);
      expect((await t.call("PATCH", `/v1/end-users/${u.id}`, { key, body: { name: "taken over" } })).status).toBe(404);
      expect((await t.call("GET", "/v1/end-users?external_id=iso", { key })).body.data).toEqual([]);
      expect((await t.call("DELETE", `/v1/end-users/${u.id}`, { key })).status).toBe(404);
    }
    // The same external_id is free in the other mode and in another project.
    expect((await t.call("POST", "/v1/end-users", { key: acme.live, body: { external_id: "iso" } })).status).toBe(201);
    expect((await t.call("POST", "/v1/end-users", { key: other.test, body: { external_id: "iso" } })).status).toBe(201);
  });

  test("restricted keys need the matching scope", async () => {
    const readOnly = acme.key("test", { scopes: ["end_users:read"] });
    const writeOnly = acme.key("test", { scopes: ["end_users:write"] });
    const r1 = await t.call("POST", "/v1/end-users", { key: readOnly, body: {} });
    expect(r1.status).toBe(403);
    expect(r1.body.error.code).toBe("forbidden");
    expect((await t.call("GET", "/v1/end-users", { key: readOnly })).status).toBe(200);
    expect((await t.call("POST", "/v1/end-users", { key: writeOnly, body: {} })).status).toBe(201);
    expect((await t.call("GET", "/v1/end-users", { key: writeOnly })).status).toBe(403);
    const u = (await t.call("POST", "/v1/end-users", { key: acme.test, body: {} })).body;
    expect((await t.call("GET", `/v1/end-users/${u.id}`, { key: writeOnly })).status).toBe(403);
    expect((await t.call("PATCH", `/v1/end-users/${u.id}`, { key: readOnly, body: { name: "x" } })).status).toBe(403);
    expect((await t.call("DELETE", `/v1/end-users/${u.id}`, { key: readOnly })).status).toBe(403);
    expect((await t.call("GET", `/v1/end-users/${u.id}`, { key: acme.test })).body.name).toBeNull();
  });

  test("an end-user-scoped key sees only its own end user and cannot create others", async () => {
    const mine = (await t.call("POST", "/v1/end-users", { key: acme.test, body: {} })).body;
    const theirs = (await t.call("POST", "/v1/end-users", { key: acme.test, body: {} })).body;
    const scoped = acme.key("test", { endUserId: mine.id });
    expect((await t.call("GET", `/v1/end-users/${mine.id}`, { key: scoped })).status).toBe(200);
    expect((await t.call("GET", `/v1/end-users/${theirs.id}`, { key: scoped })).status).toBe(404);
    expect((await t.call("GET", "/v1/end-users", { key: scoped })).body.data.map((u: any) => u.id)).toEqual([mine.id]);
    expect((await t.call("POST", "/v1/end-users", { key: scoped, body: {} })).status).toBe(403);
    expect((await t.call("PATCH", `/v1/end-users/${theirs.id}`, { key: scoped, body: { name: "x" } })).status).toBe(404);
    expect((await t.call("DELETE", `/v1/end-users/${theirs.id}`, { key: scoped })).status).toBe(404);
    expect((await t.call("GET", `/v1/end-users/${theirs.id}`, { key: acme.test })).body).toMatchObject({ name: null, deleted_at: null });
  });

  test("missing, malformed and unknown credentials are 401", async () => {
    for (const headers of [{}, { authorization: "Basic abc" }, { authorization: "Bearer sk_test_nope" }] as Record<string, string>[]) {
      const r = await t.call("GET", "/v1/end-users", { headers });
      expect(r.status).toBe(401);
      expect(r.body.error.code).toBe("unauthorized");
    }
  });
});
