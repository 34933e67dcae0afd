import { beforeAll, describe, expect, test } from "bun:test";
import { makeTenant, makeTestApp } from "../helpers";

let t: Awaited<ReturnType<typeof makeTestApp>>;
let acme: ReturnType<typeof makeTenant>;
let serial = 0;

beforeAll(async () => {
  t = await makeTestApp();
  acme = makeTenant(t.deps, "acme-binding");
});

async function newDevice(key = acme.test) {
  return (await t.call("POST", "/v1/devices", { key, body: { serial_number: `B-${++serial}`, model: "parley_pin" } })).body;
}
async function newEndUser(key = acme.test) {
  return (await t.call("POST", "/v1/end-users", { key, body: {} })).body;
}
async function boundDevice() {
  const device = await newDevice();
  const user = await newEndUser();
  const r = await t.call("POST", `/v1/devices/${device.id}/bind`, { key: acme.test, body: { end_user_id: user.id } });
  return { device: r.body.device, token: r.body.device_token as string, user };
}
function liveDeviceTokens(deviceId: string): number {
  return (
    t.deps.db
      .query<{ n: number }, [string]>("SELECT COUNT(*) AS n FROM credentials WHERE device_id = ? AND kind = 'device' AND revoked_at IS NULL")
      .get(deviceId)?.n ?? 0
  );
}

describe("bind: unbound -> bound", () => {
  test("returns {device, device_token}; the token is shown once and stored hashed", async () => {
    const device = await newDevice();
    const user = await newEndUser();
    const r = await t.call("POST", `/v1/devices/${device.id}/bind`, { key: acme.test, body: { end_user_id: user.id } });
    expect(r.status).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(["device", "device_token"]);
    expect(r.body.device).toMatchObject({ id: device.id, status: "bound", end_user_id: user.id });
    expect(r.body.device_token).toMatch(/^dtok_/);
    const stored = t.deps.db.query<{ n: number }, [string]>("SELECT COUNT(*) AS n FROM credentials WHERE token_hash = ?").get(r.body.device_token);
    expect(stored?.n).toBe(0);
    expect(JSON.stringify((await t.call("GET", `/v1/devices/${device.id}`, { key: acme.test })).body)).not.toContain("dtok_");
  });

  test("binding a bound device is 409 resource_conflict and issues no token", async () => {
    const { device } = await boundDevice();
    const someone = await newEndUser();
    const r = await t.call("POST", `/v1/devices/${device.id}/bind`, { key: acme.test, body: { end_user_id: someone.id } });
    expect(r.status).toBe(409);
    expect(r.body.error.code).toBe("resource_conflict");
    expect(liveDeviceTokens(device.id)).toBe(1);
  });

  test.each([
    ["unknown end user", "eu_nope", 404, "not_found"],
    ["end user of the other mode", "live-user", 404, "not_found"],
    ["deleted end user", "deleted-user", 409, "resource_conflict"],
  ])("%s: %s", async (_name, which, status, code) => {
    const device = await newDevice();
    let endUserId = which;
    if (which === "live-user") endUserId = (await newEndUser(acme.live)).id;
    if (which === "deleted-user") {
      endUserId = (await newEndUser()).id;
      await t.call("DELETE", `/v1/end-users/${endUserId}`, { key: acme.test });
    }
    const r = await t.call("POST", `/v1/devices/${device.id}/bind`, { key: acme.test, body: { end_user_id: endUserId } });
    expect(r.status).toBe(status);
    expect(r.body.error).toMatchObject({ code, param: "end_user_id" });
  });

  test("a replayed bind error is the same error", async () => {
    const { device, user } = await boundDevice();
    const call = () =>
      t.call("POST", `/v1/devices/${device.id}/bind`, {
        key: acme.test,
        body: { end_user_id: user.id },
        headers: { "idempotency-key": `rebind-${device.id}` },
      });
    const first = await call();
    const replay = await call();
    expect(first.status).toBe(409);
    expect(replay.status).toBe(409);
    expect(replay.body).toEqual(first.body);
  });

  test("unknown device is 404; a missing end_user_id is 422", async () => {
    const user = await newEndUser();
    expect((await t.call("POST", "/v1/devices/dev_nope/bind", { key: acme.test, body: { end_user_id: user.id } })).status).toBe(404);
    const device = await newDevice();
    const r = await t.call("POST", `/v1/devices/${device.id}/bind`, { key: acme.test, body: {} });
    expect(r.status).toBe(422);
    expect(r.body.error).toMatchObject({ code: "validation_error", param: "end_user_id" });
  });

  test("Idempotency-Key replays the same response (same token) without issuing another", async () => {
    const device = await newDevice();
    const user = await newEndUser();
    const call = (body: unknown) =>
      t.call("POST", `/v1/devices/${device.id}/bind`, { key: acme.test, body, headers: { "idempotency-key": `bind-${device.id}` } });
    const first = await call({ end_user_id: user.id });
    const replay = await call({ end_user_id: user.id });
    expect(replay.status).toBe(200);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(replay.body).toEqual(first.body);
    expect(liveDeviceTokens(device.id)).toBe(1);
    const kept = t.deps.db.query<{ response_body: string }, [string]>("SELECT response_body FROM idempotency_keys WHERE key = ?").get(`bind-${device.id}`);
    expect(kept?.response_body).toContain(device.id);
    expect(kept?.response_body).not.toContain(first.body.device_token);
    expect(kept?.response_body).not.toContain("dtok_");
    const other = await newEndUser();
    const conflict = await call({ end_user_id: other.id });
    expect(conflict.status).toBe(409);
    expect(conflict.body.error).toMatchObject({ code: "idempotency_key_conflict", param: "Idempotency-Key" });
  });
});

describe("bind replayed after its token stopped working (decision 013)", () => {
  async function boundWithKey(key: string) {
    const device = await newDevice();
    const user = await newEndUser();
    const call = () => t.call("POST", `/v1/devices/${device.id}/bind`, { key: acme.test, body: { end_user_id: user.id }, headers: { "idempotency-key": key } });
    const first = await call();
    expect(first.status).toBe(200);
    t.clock.advance(1000);
    return { device, user, call, token: first.body.device_token as string };
  }

  test("after an unbind, a replay is 409 resource_conflict, never the revoked token as if the device were bound", async () => {
    const { device, user, call, token } = await boundWithKey("bind-then-unbind");
    expect((await t.call("POST", `/v1/devices/${device.id}/unbind`, { key: acme.test })).status).toBe(200);
    const replay = await call();
    expect(replay.status).toBe(409);
    expect(replay.body.error.code).toBe("resource_conflict");
    expect(replay.body.error.message).toContain("undone by a later unbind");
    expect(replay.body.error.message).toContain("new Idempotency-Key");
    expect(JSON.stringify(replay.body)).not.toContain(token);
    expect(replay.headers.get("idempotent-replayed")).toBeNull();
    // Binding again with a new key works and gives a new, live token.
    const again = await t.call("POST", `/v1/devices/${device.id}/bind`, {
      key: acme.test,
      body: { end_user_id: user.id },
      headers: { "idempotency-key": "bind-again" },
    });
    expect(again.status).toBe(200);
    expect(again.body.device_token).not.toBe(token);
    // The old key, replayed now that the device is bound again, still does not hand out the revoked token.
    t.clock.advance(1000);
    const late = await call();
    expect(late.status).toBe(409);
    expect(late.body.error.message).toContain("undone by a later unbind");
  });

  test("after a token refresh, a replay is 409 resource_conflict saying the binding stands", async () => {
    const { device, call, token } = await boundWithKey("bind-then-refresh");
    const refreshed = await t.call("POST", `/v1/devices/${device.id}/token/refresh`, { key: token });
    expect(refreshed.status).toBe(200);
    const replay = await call();
    expect(replay.status).toBe(409);
    expect(replay.body.error.code).toBe("resource_conflict");
    expect(replay.body.error.message).toContain("replaced by a token refresh");
    expect(JSON.stringify(replay.body)).not.toContain(token);
    expect(JSON.stringify(replay.body)).not.toContain(refreshed.body.device_token);
    expect((await t.call("GET", `/v1/devices/${device.id}`, { key: acme.test })).body.status).toBe("bound");
  });

  test("while the token is live, a replay still returns it", async () => {
    const { call, token } = await boundWithKey("bind-still-live");
    const replay = await call();
    expect(replay.status).toBe(200);
    expect(replay.body.device_token).toBe(token);
  });
});

describe("unbind: bound -> unbound", () => {
  test("revokes the device token and clears end_user_id; rebinding issues a new token", async () => {
    const { device, token } = await boundDevice();
    const r = await t.call("POST", `/v1/devices/${device.id}/unbind`, { key: acme.test });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ id: device.id, status: "unbound", end_user_id: null });
    expect(r.body.settings).toBeDefined();
    const refused = await t.call("POST", `/v1/devices/${device.id}/token/refresh`, { key: token });
    expect(refused.status).toBe(401);
    expect(refused.body.error.code).toBe("unauthorized");
    const again = await t.call("POST", `/v1/devices/${device.id}/bind`, { key: acme.test, body: { end_user_id: (await newEndUser()).id } });
    expect(again.status).toBe(200);
    expect(again.body.device_token).not.toBe(token);
    expect((await t.call("POST", `/v1/devices/${device.id}/token/refresh`, { key: token })).status).toBe(401);
    expect((await t.call("POST", `/v1/devices/${device.id}/token/refresh`, { key: again.body.device_token })).status).toBe(200);
  });

  test("unbound -> unbind is 400 bad_request; unknown device is 404 not_found", async () => {
    const device = await newDevice();
    const r = await t.call("POST", `/v1/devices/${device.id}/unbind`, { key: acme.test });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe("bad_request");
    const missing = await t.call("POST", "/v1/devices/dev_nope/unbind", { key: acme.test });
    expect(missing.status).toBe(404);
    expect(missing.body.error).toMatchObject({ code: "not_found", message: "Device not found" });
  });
});

describe("token refresh", () => {
  test("rotates: the new token works, the old one is 401 from then on", async () => {
    const { device, token } = await boundDevice();
    const r = await t.call("POST", `/v1/devices/${device.id}/token/refresh`, { key: token });
    expect(r.status).toBe(200);
    expect(Object.keys(r.body)).toEqual(["device_token"]);
    expect(r.body.device_token).toMatch(/^dtok_/);
    expect(r.body.device_token).not.toBe(token);
    expect((await t.call("POST", `/v1/devices/${device.id}/token/refresh`, { key: token })).status).toBe(401);
    expect(liveDeviceTokens(device.id)).toBe(1);
    expect((await t.call("POST", `/v1/devices/${device.id}/token/refresh`, { key: r.body.device_token })).status).toBe(200);
  });

  test("an API key cannot refresh (403): only the device's own token can", async () => {
    const { device } = await boundDevice();
    const r = await t.call("POST", `/v1/devices/${device.id}/token/refresh`, { key: acme.test });
    expect(r.status).toBe(403);
    expect(r.body.error.code).toBe("forbidden");
  });
});

describe("device token confinement (spec 5 rule 4)", () => {
  test("another device's refresh is 403", async () => {
    const mine = await boundDevice();
    const theirs = await boundDevice();
    const r = await t.call("POST", `/v1/devices/${theirs.device.id}/token/refresh`, { key: mine.token });
    expect(r.status).toBe(403);
    expect(r.body.error.code).toBe("forbidden");
    // Their token still works: the refused call rotated nothing.
    expect((await t.call("POST", `/v1/devices/${theirs.device.id}/token/refresh`, { key: theirs.token })).status).toBe(200);
  });

  test("every endpoint outside the five is 403 for a device token, even on its own device", async () => {
    const { device, token, user } = await boundDevice();
    const calls: [string, string, unknown?][] = [
      ["GET", `/v1/devices/${device.id}`],
      ["GET", "/v1/devices"],
      ["POST", "/v1/devices", { serial_number: "X-dtok", model: "parley_pin" }],
      ["PATCH", `/v1/devices/${device.id}`, { metadata: {} }],
      ["DELETE", `/v1/devices/${device.id}`],
      ["GET", `/v1/devices/${device.id}/state`],
      ["GET", `/v1/devices/${device.id}/settings`],
      ["POST", `/v1/devices/${device.id}/bind`, { end_user_id: user.id }],
      ["POST", `/v1/devices/${device.id}/unbind`],
      ["GET", `/v1/end-users/${user.id}`],
      ["GET", "/v1/config/project"],
      ["GET", `/v1/config/devices/${device.id}`],
      ["PUT", `/v1/config/devices/${device.id}`, { auto_summarize: false }],
    ];
    for (const [method, path, body] of calls) {
      const r = await t.call(method, path, { key: token, body });
      expect({ method, path, status: r.status, code: r.body?.error?.code }).toEqual({ method, path, status: 403, code: "forbidden" });
    }
    expect((await t.call("GET", `/v1/devices/${device.id}`, { key: acme.test })).body.status).toBe("bound");
  });
});
