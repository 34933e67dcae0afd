import { beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { databasePath } from "../../src/boot";
import { openDatabase } from "../../src/db/open";
import { CredentialCache } from "../../src/http/credentials";
import { createApiKey, revokeApiKey } from "../../src/modules/keys/service";
import { makeTenant, makeTestApp } from "../helpers";
import { boundDevice } from "../modules/device-runtime-fixtures";
import { createRecording, pathOf } from "../modules/recordings-support";

// Credentials are cached per connection (decision 008). Each case here first uses the
// credential, so it is in the cache, then ends it some way: the very next request must
// be refused, whichever process or code path ended it.

let t: Awaited<ReturnType<typeof makeTestApp>>;
let acme: ReturnType<typeof makeTenant>;

beforeAll(async () => {
  t = await makeTestApp();
  acme = makeTenant(t.deps, "cache-acme");
});

const newKey = () => createApiKey(t.deps.db, { project: "cache-acme", mode: "test" }, t.clock.now());
const listUsers = (key: string) => t.call("GET", "/v1/end-users", { key });

describe("a cached credential stops working on the very next request", () => {
  test("an API key revoked in this process", async () => {
    const key = newKey();
    expect((await listUsers(key.key)).status).toBe(200);
    revokeApiKey(t.deps, key.id, t.clock.now());
    const refused = await listUsers(key.key);
    expect(refused.status).toBe(401);
    expect(refused.body.error.code).toBe("unauthorized");
  });

  test("an API key revoked through another connection to the same file (what the CLI does)", async () => {
    const key = newKey();
    expect((await listUsers(key.key)).status).toBe(200);
    const other = openDatabase(databasePath(t.deps.config));
    try {
      revokeApiKey({ db: other, credentials: new CredentialCache(other) }, key.id, t.clock.now());
    } finally {
      other.close();
    }
    // Other connections' commits are looked for at most once a millisecond (decision 008).
    await Bun.sleep(2);
    expect((await listUsers(key.key)).status).toBe(401);
  });

  test("an API key revoked by `parley keys revoke` in another process", async () => {
    const key = newKey();
    expect((await listUsers(key.key)).status).toBe(200);
    const cli = Bun.spawn([process.execPath, join(import.meta.dir, "..", "..", "src", "cli.ts"), "keys", "revoke", key.id], {
      env: { PATH: process.env.PATH ?? "", PARLEY_DATA_DIR: t.deps.config.dataDir, PARLEY_LOG_LEVEL: "silent" },
      stdout: "ignore",
      stderr: "pipe",
    });
    expect(await cli.exited).toBe(0);
    expect((await listUsers(key.key)).status).toBe(401);
  });

  test("a device token, by unbind, refresh, device deletion and end-user deletion", async () => {
    const ends: Record<string, (d: Awaited<ReturnType<typeof boundDevice>>) => Promise<unknown>> = {
      unbind: (d) => t.call("POST", `/v1/devices/${d.id}/unbind`, { key: acme.test }),
      refresh: (d) => t.call("POST", `/v1/devices/${d.id}/token/refresh`, { key: d.token }),
      "device deletion": (d) => t.call("DELETE", `/v1/devices/${d.id}`, { key: acme.test }),
      "end-user deletion": (d) => t.call("DELETE", `/v1/end-users/${d.endUserId}`, { key: acme.test }),
    };
    for (const [how, end] of Object.entries(ends)) {
      const d = await boundDevice(t, acme.test);
      expect((await d.heartbeat()).status).toBe(200);
      await end(d);
      expect({ how, status: (await d.heartbeat()).status }).toEqual({ how, status: 401 });
    }
  });

  test("a reset credential, by cancelling its command and by unbinding its device", async () => {
    const ends: Record<string, (deviceId: string, commandId: string) => Promise<unknown>> = {
      cancel: (deviceId, commandId) => t.call("POST", `/v1/devices/${deviceId}/commands/${commandId}/cancel`, { key: acme.test }),
      unbind: (deviceId) => t.call("POST", `/v1/devices/${deviceId}/unbind`, { key: acme.test }),
    };
    for (const [how, end] of Object.entries(ends)) {
      const d = await boundDevice(t, acme.test);
      await d.heartbeat();
      const cmd = (await t.call("POST", `/v1/devices/${d.id}/reset`, { key: acme.test })).body;
      // 403, not 401: the credential is live, this route just does not take it.
      expect((await listUsers(cmd.grant_token)).status).toBe(403);
      await end(d.id, cmd.id);
      expect({ how, status: (await listUsers(cmd.grant_token)).status }).toEqual({ how, status: 401 });
    }
  });

  test("an upload token, once used", async () => {
    const rec = await createRecording(t, acme.test);
    const url = pathOf((await t.call("POST", `/v1/recordings/${rec.id}/upload-url`, { key: acme.test, body: {} })).body.upload_url);
    // An empty body is refused before the token is spent, and leaves it cached.
    expect((await t.call("PUT", url, { rawBody: "" })).status).toBe(400);
    expect((await t.call("PUT", url, { rawBody: "RIFF", headers: { "content-type": "audio/wav" } })).status).not.toBe(401);
    expect((await t.call("PUT", url, { rawBody: "RIFF", headers: { "content-type": "audio/wav" } })).status).toBe(401);
  });

  test("an expiring credential, once its time has passed (checked on every use, not when cached)", async () => {
    const rec = await createRecording(t, acme.test);
    const upload = (await t.call("POST", `/v1/recordings/${rec.id}/upload-url`, { key: acme.test, body: {} })).body;
    const url = pathOf(upload.upload_url);
    expect((await t.call("PUT", url, { rawBody: "" })).status).toBe(400);
    t.clock.set(new Date(Date.parse(upload.expires_at) + 1));
    expect((await t.call("PUT", url, { rawBody: "" })).status).toBe(401);
  });
});
