import { beforeAll, describe, expect, test } from "bun:test";
import { GrantKeys, verifyGrant } from "../../src/modules/grants/signing";
import { makeTenant, makeTestApp } from "../helpers";
import { boundDevice } from "./device-runtime-fixtures";

let t: Awaited<ReturnType<typeof makeTestApp>>;
let acme: ReturnType<typeof makeTenant>;
let publicKey: string;

beforeAll(async () => {
  t = await makeTestApp();
  acme = makeTenant(t.deps, "grant-acme");
  publicKey = (await t.call("GET", "/v1/device-grants/public-key", { key: acme.test })).body.public_key;
});

const wifi = (id: string, body?: unknown, key = acme.test) => t.call("POST", `/v1/devices/${id}/wifi-config/grant`, { key, body });

describe("WiFi configuration grant (spec 4.2)", () => {
  test("200 {grant_blob, expires_at}: Ed25519-signed claims a device can verify offline; default 900 s", async () => {
    const d = await boundDevice(t, acme.test);
    const r = await wifi(d.id, {});
    expect(r.status).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(["expires_at", "grant_blob"]);
    expect(Date.parse(r.body.expires_at) - t.clock.now().getTime()).toBe(900_000);
    const claims = verifyGrant(publicKey, r.body.grant_blob);
    expect(claims).toMatchObject({ typ: "wifi_config", dev: d.id });
    expect((claims!.exp as number) - (claims!.iat as number)).toBe(900);
    expect(claims!.exp).toBe(Date.parse(r.body.expires_at) / 1000);
    // Two grants carry different jti values, so a device can refuse a replay.
    const second = verifyGrant(publicKey, (await wifi(d.id, {})).body.grant_blob);
    expect(second!.jti).not.toBe(claims!.jti);
  });

  test("no body at all takes the default; expires_in_seconds bounds are 60-3600", async () => {
    const d = await boundDevice(t, acme.test);
    expect((await wifi(d.id)).status).toBe(200);
    expect(Date.parse((await wifi(d.id, { expires_in_seconds: 60 })).body.expires_at) - t.clock.now().getTime()).toBe(60_000);
    expect((await wifi(d.id, { expires_in_seconds: 3600 })).status).toBe(200);
    for (const bad of [59, 3601, 100.5, "900"]) {
      const r = await wifi(d.id, { expires_in_seconds: bad });
      expect(r.status).toBe(422);
      expect(r.body.error).toMatchObject({ code: "validation_error", param: "expires_in_seconds" });
    }
  });

  test("a tampered blob or another key fails verification", async () => {
    const d = await boundDevice(t, acme.test);
    const blob: string = (await wifi(d.id, {})).body.grant_blob;
    const [p, payload, sig] = blob.split(".");
    const forged = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(payload!, "base64url").toString()), dev: "dev_other" })).toString("base64url");
    expect(verifyGrant(publicKey, `${p}.${forged}.${sig}`)).toBeNull();
    expect(verifyGrant(new GrantKeys("another-secret").publicKey("org_x"), blob)).toBeNull();
  });

  test("400 device_not_wifi_capable without capability 0x02; 404 not_found for an unknown device", async () => {
    const d = await boundDevice(t, acme.test, { capabilities: 0x05 });
    const r = await wifi(d.id, {});
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe("device_not_wifi_capable");
    const missing = await wifi("dev_missing", {});
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe("not_found");
  });
});

describe("deprovision grant", () => {
  test("bound to the device's nonce; default 300 s; nonce shape validated", async () => {
    const d = await boundDevice(t, acme.test);
    const nonce = "bT4x9Qk2LmZ7wR1a";
    const r = await t.call("POST", `/v1/devices/${d.id}/deprovision/grant`, { key: acme.test, body: { nonce } });
    expect(r.status).toBe(200);
    expect(Date.parse(r.body.expires_at) - t.clock.now().getTime()).toBe(300_000);
    expect(verifyGrant(publicKey, r.body.grant_blob)).toMatchObject({ typ: "deprovision", dev: d.id, nonce });
    for (const bad of [{}, { nonce: "short" }, { nonce: "has spaces in it!!" }, { nonce, expires_in_seconds: 10 }]) {
      expect((await t.call("POST", `/v1/devices/${d.id}/deprovision/grant`, { key: acme.test, body: bad })).status).toBe(422);
    }
  });
});

describe("command grant_token", () => {
  test("an ordinary command's grant_token is a signed grant naming the command, stable across reads", async () => {
    const d = await boundDevice(t, acme.test);
    await d.heartbeat();
    const cmd = (await t.call("POST", `/v1/devices/${d.id}/commands`, { key: acme.test, body: { type: "trigger_upload" } })).body;
    expect(verifyGrant(publicKey, cmd.grant_token)).toMatchObject({ typ: "command", cmd: cmd.id, dev: d.id, type: "trigger_upload", exp: cmd.expires_at });
    const delivered = (await d.heartbeat()).body.commands[0];
    expect(delivered.grant_token).toBe(cmd.grant_token);
  });
});
