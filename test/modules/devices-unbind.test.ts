import { beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { addFirmware } from "../../src/modules/firmware/releases";
import { makeTempDir, makeTenant, makeTestApp } from "../helpers";
import { boundDevice } from "./device-runtime-fixtures";

/** What ends with a binding (unbind, end-user deletion, device deletion, executed reset): nothing queued survives it. */
let t: Awaited<ReturnType<typeof makeTestApp>>;
let acme: ReturnType<typeof makeTenant>;
let versions = 0;

beforeAll(async () => {
  t = await makeTestApp();
  acme = makeTenant(t.deps, "unbind-acme");
});

/** A start_recording that would outlive the binding, and a factory reset with its rct_. */
async function queueForWearer(d: Awaited<ReturnType<typeof boundDevice>>) {
  await d.heartbeat({ recording_state: { device_state: "idle" } });
  const start = await t.call("POST", `/v1/devices/${d.id}/commands`, { key: acme.test, body: { type: "start_recording", ttl_seconds: 3600 } });
  const reset = await t.call("POST", `/v1/devices/${d.id}/reset`, { key: acme.test });
  expect([start.status, reset.status]).toEqual([201, 201]);
  return { startId: start.body.id as string, resetId: reset.body.id as string, rct: reset.body.grant_token as string };
}

function commandStatuses(deviceId: string): string[] {
  return t.deps.db
    .query<{ status: string }, [string]>("SELECT status FROM device_commands WHERE device_id = ? ORDER BY id")
    .all(deviceId)
    .map((r) => r.status);
}

const complete = (deviceId: string, cmdId: string, rct: string) =>
  t.call("POST", `/v1/devices/${deviceId}/commands/${cmdId}/complete`, { key: rct, body: { status: "executed" } });

function publishedRelease(): string {
  const file = join(makeTempDir(), "fw.bin");
  writeFileSync(file, "image");
  return addFirmware(
    t.deps.db,
    t.deps.config.dataDir,
    { organizationId: acme.project.organization_id, version: `8.0.${++versions}`, model: "parley_pin", file, publish: true },
    t.clock.now(),
  ).id;
}

describe("ending a binding cancels what was queued for the wearer", () => {
  test("unbind then rebind to a new end user: the first heartbeat gets nothing, the old rct_ is dead, the new binding stands", async () => {
    const d = await boundDevice(t, acme.test);
    const { startId, resetId, rct } = await queueForWearer(d);
    expect((await t.call("POST", `/v1/devices/${d.id}/unbind`, { key: acme.test })).status).toBe(200);
    const next = (await t.call("POST", "/v1/end-users", { key: acme.test, body: {} })).body;
    const rebound = await t.call("POST", `/v1/devices/${d.id}/bind`, { key: acme.test, body: { end_user_id: next.id } });
    expect(rebound.status).toBe(200);

    const hb = await t.call("POST", `/v1/devices/${d.id}/heartbeat`, { key: rebound.body.device_token, body: { channel: "wifi" } });
    expect(hb.status).toBe(200);
    expect(hb.body.commands).toEqual([]);
    expect((await complete(d.id, resetId, rct)).status).toBe(401);
    expect((await t.call("GET", `/v1/devices/${d.id}`, { key: acme.test })).body).toMatchObject({ status: "bound", end_user_id: next.id });
    for (const id of [startId, resetId]) {
      const cmd = (await t.call("GET", `/v1/devices/${d.id}/commands/${id}`, { key: acme.test })).body;
      expect(cmd.status).toBe("cancelled");
    }
  });

  test("deleting the end user releases its device the same way", async () => {
    const d = await boundDevice(t, acme.test);
    const { resetId, rct } = await queueForWearer(d);
    expect((await t.call("DELETE", `/v1/end-users/${d.endUserId}`, { key: acme.test })).status).toBe(204);
    expect(commandStatuses(d.id)).toEqual(["cancelled", "cancelled"]);
    expect((await complete(d.id, resetId, rct)).status).toBe(401);
  });

  test("deleting the device also cancels its OTA assignment in flight; an unbind keeps it for the next wearer", async () => {
    const kept = await boundDevice(t, acme.test);
    const keptOta = (await t.call("POST", `/v1/devices/${kept.id}/ota`, { key: acme.test, body: { firmware_release_id: publishedRelease() } })).body;
    await t.call("POST", `/v1/devices/${kept.id}/unbind`, { key: acme.test });
    expect((await t.call("GET", `/v1/devices/${kept.id}/ota/${keptOta.id}`, { key: acme.test })).body.status).toBe("pending");

    const d = await boundDevice(t, acme.test);
    const { resetId, rct } = await queueForWearer(d);
    const ota = (await t.call("POST", `/v1/devices/${d.id}/ota`, { key: acme.test, body: { firmware_release_id: publishedRelease() } })).body;
    expect((await t.call("DELETE", `/v1/devices/${d.id}`, { key: acme.test })).status).toBe(204);
    expect(commandStatuses(d.id)).toEqual(["cancelled", "cancelled"]);
    expect(t.deps.db.query<{ status: string }, [string]>("SELECT status FROM ota_assignments WHERE id = ?").get(ota.id)?.status).toBe("cancelled");
    expect((await complete(d.id, resetId, rct)).status).toBe(401);
  });

  test("an executed factory reset cancels the other commands still open", async () => {
    const d = await boundDevice(t, acme.test);
    const { startId, resetId, rct } = await queueForWearer(d);
    expect((await complete(d.id, resetId, rct)).body.status).toBe("executed");
    expect((await t.call("GET", `/v1/devices/${d.id}/commands/${startId}`, { key: acme.test })).body.status).toBe("cancelled");
  });
});
