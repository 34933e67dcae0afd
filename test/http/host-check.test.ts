import { describe, expect, test } from "bun:test";
import { ConfigError, loadConfig } from "../../src/config";
import { countAdmins } from "../../src/modules/admins/service";
import { makeTestApp } from "../helpers";

// Issue 29, item 2: DNS rebinding (decision 114). A page at a name the attacker's DNS points
// at the box sends that name as Host, and its Origin matches it.

const FIRST = { email: "first@clinic.example", password: "the first good password" };

describe("the Host check", () => {
  test("a rebound name cannot create the first administrator from a browser on the box: 421 before any route runs", async () => {
    const t = await makeTestApp();
    const server = t.app.listen({ port: 0, hostname: "127.0.0.1" });
    try {
      const port = server.server!.port;
      const setup = (host: string) =>
        fetch(`http://127.0.0.1:${port}/dashboard/api/setup`, {
          method: "POST",
          headers: { host, origin: `http://${host}`, "content-type": "application/json" },
          body: JSON.stringify(FIRST),
        });
      const rebound = await setup(`rebind.attacker.example:${port}`);
      expect(rebound.status).toBe(421);
      const body = await rebound.json();
      expect(body.error.code).toBe("misdirected_request");
      expect(body.error.message).toContain("PARLEY_ALLOWED_HOSTS");
      expect(body.error.message).toContain("PARLEY_PUBLIC_URL");
      expect(body.error.request_id).toMatch(/^req_/);
      expect(rebound.headers.get("x-content-type-options")).toBe("nosniff");
      expect(countAdmins(t.deps.db)).toBe(0);
      // Any route, known or not, and any method.
      expect((await fetch(`http://127.0.0.1:${port}/v1/end-users`, { headers: { host: "rebind.attacker.example" } })).status).toBe(421);
      expect((await fetch(`http://127.0.0.1:${port}/nothing-here`, { headers: { host: "rebind.attacker.example" } })).status).toBe(421);
      // The box's own name for itself works, as before.
      expect((await setup(`localhost:${port}`)).status).toBe(201);
      expect(countAdmins(t.deps.db)).toBe(1);
    } finally {
      server.stop(true);
    }
  });

  test("loopback names, any IP address, the public URL's host, PARLEY_HOST and PARLEY_ALLOWED_HOSTS are served; other names are not", async () => {
    const t = await makeTestApp({
      env: { PARLEY_PUBLIC_URL: "https://parley.clinic.lan:8443", PARLEY_HOST: "box-bind.lan", PARLEY_ALLOWED_HOSTS: "Parley.Local, other.clinic.lan." },
    });
    const statusFor = async (host: string) => (await t.app.handle(new Request("http://localhost/healthz", { headers: { host } }))).status;
    const served = [
      "localhost",
      "localhost:8080",
      "LOCALHOST.",
      "app.localhost:3000",
      "127.0.0.1",
      "127.0.0.1:8080",
      "[::1]:8080",
      "192.168.1.20:8080",
      "10.0.0.7",
      "[fe80::1]",
      "parley.clinic.lan",
      "parley.clinic.lan:8443",
      "box-bind.lan",
      "parley.local:8080",
      "other.clinic.lan",
    ];
    const refused = [
      "rebind.attacker.example",
      "rebind.attacker.example:8080",
      "parley.clinic.lan.evil.example",
      "localhost.evil.example",
      "127.0.0.1.nip.io",
      "2130706433",
      "evil.example@127.0.0.1",
      "a b",
      "",
    ];
    for (const host of served) expect([host, await statusFor(host)]).toEqual([host, 200]);
    for (const host of refused) expect([host, await statusFor(host)]).toEqual([host, 421]);
  });

  test("PARLEY_ALLOWED_HOSTS=* turns the check off; an entry with a port is a configuration error", async () => {
    const t = await makeTestApp({ env: { PARLEY_ALLOWED_HOSTS: "*" } });
    expect((await t.app.handle(new Request("http://localhost/healthz", { headers: { host: "anything.example" } }))).status).toBe(200);
    expect(() => loadConfig({ PARLEY_ALLOWED_HOSTS: "box.lan:8080" })).toThrow(ConfigError);
    expect(loadConfig({ PARLEY_ALLOWED_HOSTS: " A.lan ,b.lan." }).allowedHosts).toEqual(["a.lan", "b.lan"]);
    expect(loadConfig({}).allowedHosts).toEqual([]);
  });
});
