import { beforeAll, describe, expect, test } from "bun:test";
import { makeTenant, makeTestApp } from "../helpers";
import { boundDevice } from "./device-runtime-fixtures";

let t: Awaited<ReturnType<typeof makeTestApp>>;
let acme: ReturnType<typeof makeTenant>;

beforeAll(async () => {
  t = await makeTestApp();
  acme = makeTenant(t.deps, "cmd-acme");
});

const send = (deviceId: string, body: Record<string, unknown>, key = acme.test) => t.call("POST", `/v1/devices/${deviceId}/commands`, { key, body });

describe("commands: creation and admission (spec 3.2, 4.2 rules 1-4)", () => {
  test("an online bound device gets a 201 pending command with every field of spec 2.6", async () => {
    const d = await boundDevice(t, acme.test);
    await d.heartbeat({ recording_state: { device_state: "idle" } });
    const r = await send(d.id, { type: "start_recording", params: { max_duration_seconds: 600, upload_after_stop: true, app_metadata: { note: "x" } } });
    expect(r.status).toBe(201);
    expect(Object.keys(r.body).sort()).toEqual([
      "created_at",
      "delivered_at",
      "device_id",
      "error",
      "executed_at",
      "expires_at",
      "grant_token",
      "id",
      "params",
      "result",
      "status",
      "type",
    ]);
    expect(r.body).toMatchObject({
      device_id: d.id,
      type: "start_recording",
      status: "pending",
      result: null,
      error: null,
      delivered_at: null,
      executed_at: null,
    });
    expect(r.body.id).toMatch(/^cmd_/);
    expect(r.body.params).toEqual({ max_duration_seconds: 600, upload_after_stop: true, app_metadata: { note: "x" } });
    expect(Date.parse(r.body.expires_at) - Date.parse(r.body.created_at)).toBe(300_000);
    expect(typeof r.body.grant_token).toBe("string");
  });

  test("ttl_seconds sets expires_at", async () => {
    const d = await boundDevice(t, acme.test);
    await d.heartbeat();
    const r = await send(d.id, { type: "trigger_upload", ttl_seconds: 30 });
    expect(Date.parse(r.body.expires_at) - Date.parse(r.body.created_at)).toBe(30_000);
  });

  test("a device never heard from, or heard from 60 s ago, is 409 invalid_request naming age and channel", async () => {
    const d = await boundDevice(t, acme.test);
    const never = await send(d.id, { type: "trigger_upload" });
    expect(never.status).toBe(409);
    expect(never.body.error.code).toBe("invalid_request");
    expect(never.body.error.message).toContain("never sent a heartbeat");
    await d.heartbeat({ channel: "cellular" });
    t.clock.advance(59_000);
    expect((await send(d.id, { type: "trigger_upload" })).status).toBe(201);
    t.clock.advance(1_000);
    const stale = await send(d.id, { type: "trigger_upload" });
    expect(stale.status).toBe(409);
    expect(stale.body.error.code).toBe("invalid_request");
    expect(stale.body.error.message).toContain("60 seconds ago over cellular");
  });

  test("an unbound device is 409 invalid_request", async () => {
    const dev = await t.call("POST", "/v1/devices", { key: acme.test, body: { serial_number: `UNB-${Date.now()}`, model: "parley_pin" } });
    const r = await send(dev.body.id, { type: "trigger_upload" });
    expect(r.status).toBe(409);
    expect(r.body.error.code).toBe("invalid_request");
    expect(r.body.error.message).toContain("not bound");
  });

  test("start while recording and stop while not are 409 resource_already_exists", async () => {
    const d = await boundDevice(t, acme.test);
    await d.heartbeat({ recording_state: { device_state: "idle" } });
    const stop = await send(d.id, { type: "stop_recording" });
    expect(stop.status).toBe(409);
    expect(stop.body.error).toMatchObject({ code: "resource_already_exists", message: "The device is not currently recording." });
    await d.heartbeat({ recording_state: { device_state: "recording", recording_id: "local-1" } });
    const start = await send(d.id, { type: "start_recording" });
    expect(start.status).toBe(409);
    expect(start.body.error).toMatchObject({ code: "resource_already_exists", message: "The device is already recording." });
    expect((await send(d.id, { type: "stop_recording" })).status).toBe(201);
  });

  test("unknown device is 404 resource_not_found", async () => {
    const r = await send("dev_nope", { type: "trigger_upload" });
    expect(r.status).toBe(404);
    expect(r.body.error.code).toBe("resource_not_found");
  });

  test.each([
    [{ type: "factory_reset" }, "type"],
    [{ type: "dance" }, "type"],
    [{}, "type"],
    [{ type: "start_recording", params: { max_duration_seconds: 0 } }, "params.max_duration_seconds"],
    [{ type: "start_recording", params: { max_duration_seconds: 86_401 } }, "params.max_duration_seconds"],
    [{ type: "trigger_upload", idempotency_key: "k".repeat(65) }, "idempotency_key"],
    [{ type: "trigger_upload", ttl_seconds: 0 }, "ttl_seconds"],
  ])("%j is 422 validation_error naming %s", async (body, param) => {
    const d = await boundDevice(t, acme.test);
    await d.heartbeat();
    const r = await send(d.id, body);
    expect(r.status).toBe(422);
    expect(r.body.error).toMatchObject({ code: "validation_error", param });
  });

  test("a repeated idempotency_key returns the earlier command, per device", async () => {
    const d = await boundDevice(t, acme.test);
    const e = await boundDevice(t, acme.test);
    await d.heartbeat();
    await e.heartbeat();
    const first = await send(d.id, { type: "trigger_upload", idempotency_key: "abc" });
    const again = await send(d.id, { type: "trigger_upload", idempotency_key: "abc" });
    expect(first.status).toBe(201);
    expect(again.status).toBe(200);
    expect(again.body.id).toBe(first.body.id);
    // Still answered once the device has gone quiet: the command exists already.
    t.clock.advance(120_000);
    expect((await send(d.id, { type: "trigger_upload", idempotency_key: "abc" })).body.id).toBe(first.body.id);
    await e.heartbeat();
    const other = await send(e.id, { type: "trigger_upload", idempotency_key: "abc" });
    expect(other.status).toBe(201);
    expect(other.body.id).not.toBe(first.body.id);
    const list = await t.call("GET", `/v1/devices/${d.id}/commands`, { key: acme.test });
    expect(list.body.total).toBe(1);
  });
});

describe("commands: lifecycle through heartbeats (spec 3.2)", () => {
  test("pending -> delivered on a heartbeat, not redelivered, -> executed by acknowledgement", async () => {
    const d = await boundDevice(t, acme.test);
    await d.heartbeat();
    const cmd = (await send(d.id, { type: "trigger_upload" })).body;
    t.clock.advance(1_000);
    const hb = await d.heartbeat({ channel: "bluetooth" });
    expect(hb.status).toBe(200);
    expect(hb.body.commands.map((c: any) => c.id)).toEqual([cmd.id]);
    expect(hb.body.commands[0]).toMatchObject({ status: "delivered", delivered_at: t.clock.now().toISOString() });
    expect(hb.body.server_time).toBe(t.clock.now().toISOString());
    expect((await d.heartbeat()).body.commands).toEqual([]);
    t.clock.advance(1_000);
    await d.heartbeat({ command_results: [{ command_id: cmd.id, status: "executed", result: { uploaded: 2 } }] });
    const got = (await t.call("GET", `/v1/devices/${d.id}/commands/${cmd.id}`, { key: acme.test })).body;
    expect(got).toMatchObject({ status: "executed", result: { uploaded: 2 }, executed_at: t.clock.now().toISOString(), error: null });
    // A resent result after a lost response changes nothing.
    t.clock.advance(1_000);
    await d.heartbeat({ command_results: [{ command_id: cmd.id, status: "failed" }] });
    expect((await t.call("GET", `/v1/devices/${d.id}/commands/${cmd.id}`, { key: acme.test })).body.status).toBe("executed");
  });

  test("delivered -> failed by acknowledgement fills error", async () => {
    const d = await boundDevice(t, acme.test);
    await d.heartbeat();
    const cmd = (await send(d.id, { type: "trigger_upload" })).body;
    await d.heartbeat();
    await d.heartbeat({ command_results: [{ command_id: cmd.id, status: "failed", error: { code: "no_network", message: "offline" } }] });
    const got = (await t.call("GET", `/v1/devices/${d.id}/commands/${cmd.id}`, { key: acme.test })).body;
    expect(got).toMatchObject({ status: "failed", error: { code: "no_network", message: "offline" } });
    expect(got.executed_at).not.toBeNull();
  });

  test("a pending command's result is ignored: only delivered commands can be acknowledged", async () => {
    const d = await boundDevice(t, acme.test);
    await d.heartbeat();
    const cmd = (await send(d.id, { type: "trigger_upload" })).body;
    const hb = await d.heartbeat({ command_results: [{ command_id: cmd.id, status: "executed" }] });
    // Results are applied before delivery, so the command was pending then and is delivered now.
    expect(hb.body.commands[0].status).toBe("delivered");
  });

  test("reconciliation: a later recording_state executes a start; a mismatch fails it only after the 30 s grace", async () => {
    const d = await boundDevice(t, acme.test);
    await d.heartbeat({ recording_state: { device_state: "idle" } });
    const ok = (await send(d.id, { type: "start_recording" })).body;
    await d.heartbeat({ recording_state: { device_state: "idle" } }); // delivers; same heartbeat does not judge it
    t.clock.advance(5_000);
    await d.heartbeat({ recording_state: { device_state: "recording" } });
    const executed = (await t.call("GET", `/v1/devices/${d.id}/commands/${ok.id}`, { key: acme.test })).body;
    expect(executed.status).toBe("executed");
    expect(executed.result).toMatchObject({ reconciled: true });

    const stop = (await send(d.id, { type: "stop_recording" })).body;
    await d.heartbeat({ recording_state: { device_state: "recording" } });
    t.clock.advance(29_000);
    await d.heartbeat({ recording_state: { device_state: "recording" } });
    expect((await t.call("GET", `/v1/devices/${d.id}/commands/${stop.id}`, { key: acme.test })).body.status).toBe("delivered");
    t.clock.advance(1_000);
    await d.heartbeat({ recording_state: { device_state: "recording" } });
    const failed = (await t.call("GET", `/v1/devices/${d.id}/commands/${stop.id}`, { key: acme.test })).body;
    expect(failed.status).toBe("failed");
    expect(failed.error.code).toBe("state_mismatch");
  });

  test("a heartbeat without recording_state reconciles nothing", async () => {
    const d = await boundDevice(t, acme.test);
    await d.heartbeat({ recording_state: { device_state: "idle" } });
    const cmd = (await send(d.id, { type: "start_recording" })).body;
    await d.heartbeat();
    t.clock.advance(60_000);
    await d.heartbeat({ battery_percent: 80 });
    expect((await t.call("GET", `/v1/devices/${d.id}/commands/${cmd.id}`, { key: acme.test })).body.status).toBe("delivered");
  });

  test("expiry: pending and delivered commands past expires_at become expired by the periodic task; expired ones are not delivered", async () => {
    const d = await boundDevice(t, acme.test);
    await d.heartbeat();
    const pending = (await send(d.id, { type: "trigger_upload", ttl_seconds: 10 })).body;
    const delivered = (await send(d.id, { type: "trigger_upload", ttl_seconds: 10, idempotency_key: "second" })).body;
    await t.runTask("expire-device-commands");
    expect((await t.call("GET", `/v1/devices/${d.id}/commands/${pending.id}`, { key: acme.test })).body.status).toBe("pending");
    await t.deps.db.query("UPDATE device_commands SET status = 'delivered', delivered_at = ? WHERE id = ?").run(t.clock.now().toISOString(), delivered.id);
    t.clock.advance(10_000);
    expect((await d.heartbeat()).body.commands).toEqual([]);
    await t.runTask("expire-device-commands");
    for (const c of [pending, delivered]) {
      expect((await t.call("GET", `/v1/devices/${d.id}/commands/${c.id}`, { key: acme.test })).body.status).toBe("expired");
    }
  });

  test("cancel: pending or delivered -> cancelled; a finished command is 409 resource_conflict", async () => {
    const d = await boundDevice(t, acme.test);
    await d.heartbeat();
    const cmd = (await send(d.id, { type: "trigger_upload" })).body;
    const cancelled = await t.call("POST", `/v1/devices/${d.id}/commands/${cmd.id}/cancel`, { key: acme.test });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.status).toBe("cancelled");
    expect((await d.heartbeat()).body.commands).toEqual([]);
    const again = await t.call("POST", `/v1/devices/${d.id}/commands/${cmd.id}/cancel`, { key: acme.test });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe("resource_conflict");
    const delivered = (await send(d.id, { type: "trigger_upload" })).body;
    await d.heartbeat();
    expect((await t.call("POST", `/v1/devices/${d.id}/commands/${delivered.id}/cancel`, { key: acme.test })).body.status).toBe("cancelled");
    expect((await t.call("POST", `/v1/devices/${d.id}/commands/cmd_nope/cancel`, { key: acme.test })).status).toBe(404);
  });

  test("list is newest first with the envelope and a status filter", async () => {
    const d = await boundDevice(t, acme.test);
    await d.heartbeat();
    const a = (await send(d.id, { type: "trigger_upload" })).body;
    t.clock.advance(10);
    const b = (await send(d.id, { type: "trigger_upload" })).body;
    await t.call("POST", `/v1/devices/${d.id}/commands/${a.id}/cancel`, { key: acme.test });
    const list = await t.call("GET", `/v1/devices/${d.id}/commands?limit=1`, { key: acme.test });
    expect(list.body).toMatchObject({ has_more: true, total: 2 });
    expect(list.body.data[0].id).toBe(b.id);
    const next = await t.call("GET", `/v1/devices/${d.id}/commands?limit=1&cursor=${list.body.next_cursor}`, { key: acme.test });
    expect(next.body.data[0].id).toBe(a.id);
    const cancelled = await t.call("GET", `/v1/devices/${d.id}/commands?status=cancelled`, { key: acme.test });
    expect(cancelled.body.data.map((c: any) => c.id)).toEqual([a.id]);
  });
});
