// A write that cannot get the database's lock within busy_timeout (another process holds it)
// is a passing state: 503 service_unavailable with Retry-After in the spec's error body,
// never a 500 (issue 31). Through a transaction and through the group committer alike.
import { Database } from "bun:sqlite";
import { expect, test } from "bun:test";
import { databasePath } from "../../src/boot";
import { makeTenant, makeTestApp } from "../helpers";

test("a write while another connection holds the write lock past busy_timeout: 503 with Retry-After, and the retry succeeds", async () => {
  const t = await makeTestApp();
  const tenant = makeTenant(t.deps);
  const device = (await t.call("POST", "/v1/devices", { key: tenant.test, body: { serial_number: "BUSY-1", model: "parley_pin", capabilities: 1 } })).body;
  const wearer = (await t.call("POST", "/v1/end-users", { key: tenant.test, body: {} })).body;
  const dtok = (await t.call("POST", `/v1/devices/${device.id}/bind`, { key: tenant.test, body: { end_user_id: wearer.id } })).body.device_token;
  // The server's connection gives up after 50 ms instead of 5 s, so the test does not wait.
  t.deps.db.exec("PRAGMA busy_timeout = 50");
  const other = new Database(databasePath(t.deps.config));
  other.exec("BEGIN IMMEDIATE");

  const created = await t.call("POST", "/v1/end-users", { key: tenant.test, body: { name: "while busy" } });
  const heartbeat = await t.call("POST", `/v1/devices/${device.id}/heartbeat`, { key: dtok, body: { battery_percent: 80 } });
  for (const reply of [created, heartbeat]) {
    expect(reply.status).toBe(503);
    expect(reply.headers.get("retry-after")).toBe("1");
    expect(reply.body.error).toMatchObject({ code: "service_unavailable", message: expect.stringContaining("busy"), request_id: expect.any(String) });
  }

  other.exec("ROLLBACK");
  other.close();
  expect((await t.call("POST", "/v1/end-users", { key: tenant.test, body: { name: "after" } })).status).toBe(201);
  expect((await t.call("POST", `/v1/devices/${device.id}/heartbeat`, { key: dtok, body: { battery_percent: 80 } })).status).toBe(200);
});
