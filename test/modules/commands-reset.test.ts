import { beforeAll, describe, expect, test } from "bun:test";
import { makeTenant, makeTestApp } from "../helpers";
import { boundDevice } from "./device-runtime-fixtures";

let t: Awaited<ReturnType<typeof makeTestApp>>;
let acme: ReturnType<typeof makeTenant>;

beforeAll(async () => {
  t = await makeTestApp();
  acme = makeTenant(t.deps, "reset-acme");
});

const reset = (id: string, key = acme.test) => t.call("POST", `/v1/devices/${id}/reset`, { key });
const complete = (id: string, cmdId: string, key: string, body: Record<string, unknown> = { status: "executed" }) =>
  t.call("POST", `/v1/devices/${id}/commands/${cmdId}/complete`, { key, body });

describe("factory reset (spec 2.6, 5)", () => {
  test("201 factory_reset command whose grant_token is an rct_ credential; delivered with the next heartbeat even if the device was quiet", async () => {
    const d = await boundDevice(t, acme.test);
    const r = await reset(d.id);
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ type: "factory_reset", status: "pending", device_id: d.id });
    expect(r.body.grant_token).toMatch(/^rct_/);
    expect(Date.parse(r.body.expires_at) - Date.parse(r.body.created_at)).toBe(86_400_000);
    t.clock.advance(3_600_000);
    const hb = await d.heartbeat();
    expect(hb.body.commands).toHaveLength(1);
    expect(hb.body.commands[0]).toMatchObject({ id: r.body.id, status: "delivered", grant_token: r.body.grant_token });
  });

  test("only secret keys and restricted keys holding devices:write see the rct_; other restricted keys see null", async () => {
    const d = await boundDevice(t, acme.test);
    const cmd = (await reset(d.id)).body;
    const readOnly = acme.key("test", { scopes: ["devices:read"] });
    // A write scope elsewhere does not let a key complete a reset it could not start.
    const writesElsewhere = acme.key("test", { scopes: ["devices:read", "webhooks:write", "recordings:write"] });
    const readWrite = acme.key("test", { scopes: ["devices:read", "devices:write"] });
    for (const key of [readOnly, writesElsewhere]) {
      expect((await t.call("GET", `/v1/devices/${d.id}/commands/${cmd.id}`, { key })).body.grant_token).toBeNull();
      expect((await t.call("GET", `/v1/devices/${d.id}/commands`, { key })).body.data[0].grant_token).toBeNull();
    }
    expect((await t.call("GET", `/v1/devices/${d.id}/commands/${cmd.id}`, { key: readWrite })).body.grant_token).toBe(cmd.grant_token);
    expect((await t.call("GET", `/v1/devices/${d.id}/commands/${cmd.id}`, { key: acme.test })).body.grant_token).toBe(cmd.grant_token);
  });

  test("the rct_ acknowledges exactly its command, once; an executed reset unbinds the device and revokes its token", async () => {
    const d = await boundDevice(t, acme.test);
    const cmd = (await reset(d.id)).body;
    await d.heartbeat();
    const rct = cmd.grant_token as string;
    // Only the ack endpoint: every other route refuses it.
    expect((await t.call("GET", `/v1/devices/${d.id}`, { key: rct })).status).toBe(403);
    expect((await t.call("POST", `/v1/devices/${d.id}/heartbeat`, { key: rct, body: {} })).status).toBe(403);
    expect((await t.call("GET", `/v1/devices/${d.id}/commands/${cmd.id}`, { key: rct })).status).toBe(403);
    // Other credentials cannot acknowledge.
    expect((await complete(d.id, cmd.id, acme.test)).status).toBe(403);
    expect((await complete(d.id, cmd.id, d.token)).status).toBe(403);
    // Nor can the rct_ acknowledge another command.
    await d.heartbeat();
    const other = (await t.call("POST", `/v1/devices/${d.id}/commands`, { key: acme.test, body: { type: "trigger_upload" } })).body;
    expect((await complete(d.id, other.id, rct)).status).toBe(403);
    const ok = await complete(d.id, cmd.id, rct, { status: "executed", result: { wiped: true } });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ id: cmd.id, status: "executed", result: { wiped: true }, grant_token: null });
    const again = await complete(d.id, cmd.id, rct);
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe("resource_conflict");
    const device = (await t.call("GET", `/v1/devices/${d.id}`, { key: acme.test })).body;
    expect(device).toMatchObject({ status: "unbound", end_user_id: null });
    expect((await d.heartbeat()).status).toBe(401);
  });

  test("a failed reset keeps the binding and records the error", async () => {
    const d = await boundDevice(t, acme.test);
    const cmd = (await reset(d.id)).body;
    const r = await complete(d.id, cmd.id, cmd.grant_token, { status: "failed", error: { code: "flash_locked", message: "locked" } });
    expect(r.body).toMatchObject({ status: "failed", error: { code: "flash_locked", message: "locked" } });
    expect((await t.call("GET", `/v1/devices/${d.id}`, { key: acme.test })).body.status).toBe("bound");
  });

  test("a heartbeat command_result cannot complete a reset", async () => {
    const d = await boundDevice(t, acme.test);
    const cmd = (await reset(d.id)).body;
    await d.heartbeat();
    await d.heartbeat({ command_results: [{ command_id: cmd.id, status: "executed" }] });
    expect((await t.call("GET", `/v1/devices/${d.id}/commands/${cmd.id}`, { key: acme.test })).body.status).toBe("delivered");
  });

  test("cancel revokes the rct_; a second reset while one is in flight is 409; unbound is 409 invalid_request; unknown is 404", async () => {
    const d = await boundDevice(t, acme.test);
    const cmd = (await reset(d.id)).body;
    const dup = await reset(d.id);
    expect(dup.status).toBe(409);
    expect(dup.body.error.code).toBe("resource_conflict");
    await t.call("POST", `/v1/devices/${d.id}/commands/${cmd.id}/cancel`, { key: acme.test });
    expect((await complete(d.id, cmd.id, cmd.grant_token)).status).toBe(401);
    expect((await reset(d.id)).status).toBe(201);
    const dev = await t.call("POST", "/v1/devices", { key: acme.test, body: { serial_number: `RST-UNB-${Date.now()}`, model: "parley_pin" } });
    const unbound = await reset(dev.body.id);
    expect(unbound.status).toBe(409);
    expect(unbound.body.error.code).toBe("invalid_request");
    expect((await reset("dev_nope")).body.error.code).toBe("resource_not_found");
  });

  test("an expired reset's rct_ stops working", async () => {
    const d = await boundDevice(t, acme.test);
    const cmd = (await reset(d.id)).body;
    t.clock.advance(86_400_000);
    await t.runTask("expire-device-commands");
    expect((await t.call("GET", `/v1/devices/${d.id}/commands/${cmd.id}`, { key: acme.test })).body.status).toBe("expired");
    expect((await complete(d.id, cmd.id, cmd.grant_token)).status).toBe(401);
  });
});

describe("Idempotency-Key header on reset and commands (spec 8)", () => {
  test("a replay returns the same command, and the stored record holds no credential", async () => {
    const d = await boundDevice(t, acme.test);
    const headers = { "idempotency-key": `reset-${d.id}` };
    const first = await t.call("POST", `/v1/devices/${d.id}/reset`, { key: acme.test, headers });
    const again = await t.call("POST", `/v1/devices/${d.id}/reset`, { key: acme.test, headers });
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.body).toEqual(first.body);
    await d.heartbeat();
    const cmdHeaders = { "idempotency-key": `cmd-${d.id}` };
    const c1 = await t.call("POST", `/v1/devices/${d.id}/commands`, { key: acme.test, headers: cmdHeaders, body: { type: "trigger_upload" } });
    const c2 = await t.call("POST", `/v1/devices/${d.id}/commands`, { key: acme.test, headers: cmdHeaders, body: { type: "trigger_upload" } });
    expect(c2.body.id).toBe(c1.body.id);
    const stored = t.deps.db
      .query<{ response_body: string }, []>("SELECT response_body FROM idempotency_keys")
      .all()
      .map((r) => r.response_body)
      .join("\n");
    expect(stored).not.toContain("rct_");
    expect(stored).not.toContain(first.body.grant_token);
    expect(stored).not.toContain(c1.body.grant_token);
  });

  test("a replayed key whose first request got a 4xx returns the same error, status and body (spec 7), on both routes", async () => {
    const d = await boundDevice(t, acme.test);
    const headers = { "idempotency-key": `offline-${d.id}` };
    // Never heard from: 409 invalid_request, and still that error once the device is online.
    const first = await t.call("POST", `/v1/devices/${d.id}/commands`, { key: acme.test, headers, body: { type: "trigger_upload" } });
    expect(first.status).toBe(409);
    await d.heartbeat();
    const again = await t.call("POST", `/v1/devices/${d.id}/commands`, { key: acme.test, headers, body: { type: "trigger_upload" } });
    expect(again.status).toBe(409);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.body).toEqual(first.body);

    const dev = (await t.call("POST", "/v1/devices", { key: acme.test, body: { serial_number: `IDEM-UNB-${Date.now()}`, model: "parley_pin" } })).body;
    const resetHeaders = { "idempotency-key": `reset-unbound-${dev.id}` };
    const refused = await t.call("POST", `/v1/devices/${dev.id}/reset`, { key: acme.test, headers: resetHeaders });
    expect([refused.status, refused.body.error.code]).toEqual([409, "invalid_request"]);
    const replay = await t.call("POST", `/v1/devices/${dev.id}/reset`, { key: acme.test, headers: resetHeaders });
    expect(replay.status).toBe(409);
    expect(replay.body).toEqual(refused.body);
  });
});
