import { expect, test } from "bun:test";
import { makeTenant, makeTestApp } from "../helpers";
import { standInDns } from "../support/stand-in-dns";

// Issue 29: PARLEY_WEBHOOK_ALLOW_HOSTS=127.0.0.1 opened every port of the box to webhooks.
// An entry host:port allows that port only; a bare host still allows any (decision 115).

test("a host:port entry in PARLEY_WEBHOOK_ALLOW_HOSTS allows that port only; a bare host any port", async () => {
  const app = await makeTestApp({
    env: { PARLEY_WEBHOOK_ALLOW_HOSTS: "127.0.0.1:8443,[::1]:9443,receiver.box:443,localhost" },
    dns: standInDns({ "receiver.box": ["127.0.0.1"], localhost: ["127.0.0.1"] }),
  });
  const tenant = makeTenant(app.deps);
  const status = async (url: string) => (await app.call("POST", "/v1/webhooks", { key: tenant.test, body: { url, events: ["*"] } })).status;
  const allowed = [
    "https://127.0.0.1:8443/h",
    "https://[::1]:9443/h",
    "https://[0:0:0:0:0:0:0:1]:9443/h",
    "https://receiver.box/h",
    "https://receiver.box:443/h",
    "https://localhost:6379/h",
    "https://localhost/h",
  ];
  const refused = ["https://127.0.0.1/h", "https://127.0.0.1:6379/h", "https://[::1]/h", "https://[::1]:8443/h", "https://receiver.box:8443/h"];
  for (const url of allowed) expect([url, await status(url)]).toEqual([url, 201]);
  for (const url of refused) expect([url, await status(url)]).toEqual([url, 422]);
});
