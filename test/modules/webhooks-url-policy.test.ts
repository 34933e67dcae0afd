import { beforeAll, describe, expect, test } from "bun:test";
import { recordEvent } from "../../src/events/outbox";
import { makeTenant, makeTestApp, type Reply } from "../helpers";
import { standInDns } from "../support/stand-in-dns";

// Which webhook targets are refused (decision 074): by default loopback, link-local and
// cloud metadata; LAN hosts only with PARLEY_WEBHOOK_DENY_PRIVATE; named exceptions in
// PARLEY_WEBHOOK_ALLOW_HOSTS. Names resolve through a stand-in for DNS, never the real one.
// Delivery to a real receiver, pinned to the checked address: webhooks-delivery.test.ts.

const LOCAL = "loopback, link-local or cloud metadata";

const dns = standInDns({
  "rebind-to-loopback.example.com": ["127.0.0.1"],
  "half-metadata.example.com": ["93.184.215.14", "169.254.169.254"],
  "aws-v6-metadata.example.com": ["fd00:ec2::254"],
  "mapped-loopback.example.com": ["::ffff:127.0.0.1"],
  "public.example.com": ["93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"],
  "receiver.clinic.lan": ["10.20.0.5"],
  "box.internal": ["127.0.0.1"],
});

type App = Awaited<ReturnType<typeof makeTestApp>>;

async function appWith(env: Record<string, string> = {}) {
  const app = await makeTestApp({ env, dns });
  const tenant = makeTenant(app.deps);
  const create = (url: string) => app.call("POST", "/v1/webhooks", { key: tenant.test, body: { url, events: ["*"] } });
  return { app, tenant, create };
}

function expectRefused(r: Reply, message: string) {
  expect(r.status).toBe(422);
  expect(r.body.error).toMatchObject({ code: "validation_error", param: "url" });
  expect(r.body.error.message).toContain(message);
}

describe("webhook targets: the default policy", () => {
  let t: Awaited<ReturnType<typeof appWith>>;
  beforeAll(async () => {
    t = await appWith();
  });

  test.each([
    "https://127.0.0.1/h",
    "https://127.1.2.3:8443/h",
    "https://0x7f.1/h",
    "https://2130706433/h",
    "https://0.0.0.0/h",
    "https://0/h",
    "https://[::]/h",
    "https://[::1]/h",
    "https://169.254.169.254/latest/meta-data/",
    "https://169.254.170.2/v2/credentials",
    "https://[fe80::1]/h",
    "https://[fd00:ec2::254]/h",
    "https://100.100.100.200/h",
    "https://168.63.129.16/h",
    // IPv4-mapped, IPv4-compatible, NAT64 and 6to4 forms of loopback and metadata.
    "https://[::ffff:127.0.0.1]/h",
    "https://[::ffff:169.254.169.254]/h",
    "https://[::127.0.0.1]/h",
    "https://[64:ff9b::a9fe:a9fe]/h",
    "https://[2002:7f00:1::]/h",
    "https://localhost/h",
    "https://LOCALHOST./h",
    "https://api.localhost/h",
    "https://metadata.google.internal/computeMetadata/v1/",
    "https://metadata.google.internal./h",
    "https://metadata/h",
    "https://instance-data/h",
    // Names whose addresses (from the stand-in DNS) are refused: any one of them refuses the name.
    "https://rebind-to-loopback.example.com/h",
    "https://half-metadata.example.com/h",
    "https://aws-v6-metadata.example.com/h",
    "https://mapped-loopback.example.com/h",
  ])("refuses %s at creation", async (url) => {
    expectRefused(await t.create(url), LOCAL);
  });

  test.each([
    "https://10.1.2.3/h",
    "https://172.16.0.1/h",
    "https://192.168.1.20:8443/h",
    "https://100.64.0.1/h",
    "https://[fd12:3456::1]/h",
    "https://receiver.clinic.lan/h",
    "https://public.example.com/h",
    "https://93.184.215.14/h",
    // Not resolvable now: accepted, each attempt checks again.
    "https://not-yet-in-dns.clinic.lan/h",
  ])("accepts the LAN or public host %s", async (url) => {
    expect((await t.create(url)).status).toBe(201);
  });
});

describe("webhook targets: PARLEY_WEBHOOK_ALLOW_HOSTS", () => {
  test("names hosts (as the URL writes them) that are refused nothing; other hosts are refused as before", async () => {
    const { create } = await appWith({ PARLEY_WEBHOOK_ALLOW_HOSTS: "localhost, 127.0.0.1,[::1],BOX.internal" });
    for (const url of ["https://localhost:8443/h", "https://127.0.0.1/h", "https://[::1]/h", "https://[0:0:0:0:0:0:0:1]/h", "https://box.internal/h"]) {
      expect((await create(url)).status).toBe(201);
    }
    // An allowed address does not allow the names that resolve to it.
    expectRefused(await create("https://rebind-to-loopback.example.com/h"), LOCAL);
    expectRefused(await create("https://127.0.0.2/h"), LOCAL);
    expectRefused(await create("https://169.254.169.254/h"), LOCAL);
  });

  test("with PARLEY_WEBHOOK_DENY_PRIVATE=1 it names LAN exceptions too", async () => {
    const { create } = await appWith({ PARLEY_WEBHOOK_DENY_PRIVATE: "1", PARLEY_WEBHOOK_ALLOW_HOSTS: "10.0.0.5,receiver.clinic.lan" });
    expect((await create("https://10.0.0.5/h")).status).toBe(201);
    expect((await create("https://receiver.clinic.lan/h")).status).toBe(201);
    expectRefused(await create("https://10.0.0.6/h"), "private networks");
    expectRefused(await create("https://not-yet-in-dns.clinic.lan/h"), "does not resolve");
  });
});

describe("webhook targets: checked again before each attempt", () => {
  const emit = (app: App, projectId: string) =>
    app.deps.db.transaction(() => recordEvent(app.deps, { projectId, mode: "test" }, "recording.created", { id: "rec_x" }, app.clock.now()))();

  test("a name that rebinds to loopback after creation is a failed attempt with the refusal, nothing read back", async () => {
    const rebinding = standInDns({ "flip.example.com": (n) => (n === 1 ? ["93.184.215.14"] : ["127.0.0.1"]) });
    const app = await makeTestApp({ dns: rebinding });
    const tenant = makeTenant(app.deps);
    const w = await app.call("POST", "/v1/webhooks", { key: tenant.test, body: { url: "https://flip.example.com/h", events: ["*"] } });
    expect(w.status).toBe(201);
    emit(app, tenant.project.id);
    await app.deps.webhooks.drain();
    expect(rebinding.lookups).toEqual(["flip.example.com", "flip.example.com"]);
    const d = (await app.call("GET", `/v1/webhooks/${w.body.id}/deliveries`, { key: tenant.test })).body.data[0];
    expect(d).toMatchObject({ status: "pending", attempt_count: 1 });
    expect(d.last_attempt).toMatchObject({ response_status: null, response_snippet: null, latency_ms: 0 });
    expect(d.last_attempt.error).toContain(LOCAL);
  });

  test("an endpoint stored before this policy, on a metadata address, is refused at send time", async () => {
    const app = await makeTestApp({ dns });
    const tenant = makeTenant(app.deps);
    const w = (await app.call("POST", "/v1/webhooks", { key: tenant.test, body: { url: "https://10.0.0.9/h", events: ["*"] } })).body;
    app.deps.db.query("UPDATE webhook_endpoints SET url = 'https://169.254.169.254/latest/meta-data/' WHERE id = ?").run(w.id);
    emit(app, tenant.project.id);
    await app.deps.webhooks.drain();
    const d = (await app.call("GET", `/v1/webhooks/${w.id}/deliveries`, { key: tenant.test })).body.data[0];
    expect(d.last_attempt).toMatchObject({ response_status: null, response_snippet: null });
    expect(d.last_attempt.error).toContain(LOCAL);
  });

  test("a name that stops resolving is a failed attempt saying so", async () => {
    const app = await makeTestApp({ dns });
    const tenant = makeTenant(app.deps);
    const w = (await app.call("POST", "/v1/webhooks", { key: tenant.test, body: { url: "https://gone.clinic.lan/h", events: ["*"] } })).body;
    emit(app, tenant.project.id);
    await app.deps.webhooks.drain();
    const d = (await app.call("GET", `/v1/webhooks/${w.id}/deliveries`, { key: tenant.test })).body.data[0];
    expect(d.last_attempt).toMatchObject({ response_status: null, error: "The host gone.clinic.lan does not resolve." });
  });
});
