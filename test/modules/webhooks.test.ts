import { beforeAll, describe, expect, test } from "bun:test";
import { buildDeps } from "../../src/boot";
import { loadConfig } from "../../src/config";
import { decryptWithServerSecret } from "../../src/crypto";
import { recordEvent } from "../../src/events/outbox";
import { issueCredential } from "../../src/http/credentials";
import { createLogger } from "../../src/log";
import { setOrganizationPlan } from "../../src/modules/projects/store";
import { fanOutEvents } from "../../src/modules/webhooks/delivery-store";
import { type Offer, pickFairly } from "../../src/modules/webhooks/fair-share";
import { checkWebhookUrl, DNS_TIMEOUT_MS } from "../../src/modules/webhooks/url-policy";
import { makeTenant, makeTestApp } from "../helpers";

// The API surface of webhooks (no delivery: see webhooks-delivery.test.ts).
let t: Awaited<ReturnType<typeof makeTestApp>>;
let acme: ReturnType<typeof makeTenant>;
let other: ReturnType<typeof makeTenant>;

const URL_OK = "https://hooks.example.com/parley";

beforeAll(async () => {
  t = await makeTestApp();
  acme = makeTenant(t.deps, "acme");
  other = makeTenant(t.deps, "other");
});

const create = (key: string, body: unknown) => t.call("POST", "/v1/webhooks", { key, body });

describe("webhooks: happy path", () => {
  test("create returns 201 with the secret once, stored sealed", async () => {
    const r = await create(acme.test, { url: URL_OK, events: ["recording.uploaded", "transcription.completed"] });
    expect(r.status).toBe(201);
    expect(r.body.id).toMatch(/^wh_/);
    expect(r.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(r.body).toMatchObject({
      url: URL_OK,
      events: ["recording.uploaded", "transcription.completed"],
      include_device_events: false,
      status: "enabled",
      disabled_at: null,
      failing_since: null,
    });
    expect(Object.keys(r.body).sort()).toEqual([
      "created_at",
      "disabled_at",
      "events",
      "failing_since",
      "id",
      "include_device_events",
      "secret",
      "status",
      "updated_at",
      "url",
    ]);
    const row = t.deps.db.query<{ secret_sealed: string }, [string]>("SELECT secret_sealed FROM webhook_endpoints WHERE id = ?").get(r.body.id)!;
    expect(row.secret_sealed).not.toContain(r.body.secret.slice(6));
    expect(decryptWithServerSecret(t.deps.serverSecret, row.secret_sealed)).toBe(r.body.secret);
  });

  test("list and get never show the secret; list is the envelope, newest first", async () => {
    const a = (await create(acme.test, { url: URL_OK, events: ["*"] })).body;
    t.clock.advance(1000);
    const b = (await create(acme.test, { url: `${URL_OK}/b`, events: ["summary.completed", "summary.completed"] })).body;
    expect(b.events).toEqual(["summary.completed"]);
    const list = await t.call("GET", "/v1/webhooks?limit=2", { key: acme.test });
    expect(list.status).toBe(200);
    expect(list.body.data.map((w: any) => w.id)).toEqual([b.id, a.id]);
    expect(list.body).toMatchObject({ has_more: true, total: 3 });
    expect(list.body.next_cursor).toBeString();
    for (const w of list.body.data) expect(w.secret).toBeUndefined();
    const got = await t.call("GET", `/v1/webhooks/${a.id}`, { key: acme.test });
    expect(got.status).toBe(200);
    const { secret, ...withoutSecret } = a;
    expect(secret).toBeString();
    expect(got.body).toEqual(withoutSecret);
  });

  test("delete is 204, then the endpoint is gone", async () => {
    const w = (await create(acme.test, { url: URL_OK, events: ["*"] })).body;
    const del = await t.call("DELETE", `/v1/webhooks/${w.id}`, { key: acme.test });
    expect(del.status).toBe(204);
    expect(del.body).toBeNull();
    expect((await t.call("GET", `/v1/webhooks/${w.id}`, { key: acme.test })).status).toBe(404);
    expect((await t.call("DELETE", `/v1/webhooks/${w.id}`, { key: acme.test })).body.error.code).toBe("resource_not_found");
  });

  test("the URL is stored and returned normalised, as it is checked and sent", async () => {
    const r = await create(acme.test, { url: "HTTPS://Hooks.Example.COM:443/a/../parley?x=1#frag", events: ["*"] });
    expect(r.status).toBe(201);
    expect(r.body.url).toBe("https://hooks.example.com/parley?x=1#frag");
    expect((await t.call("GET", `/v1/webhooks/${r.body.id}`, { key: acme.test })).body.url).toBe("https://hooks.example.com/parley?x=1#frag");
    const row = t.deps.db.query<{ url: string }, [string]>("SELECT url FROM webhook_endpoints WHERE id = ?").get(r.body.id)!;
    expect(row.url).toBe("https://hooks.example.com/parley?x=1#frag");
    // A URL within the limit as sent but longer once percent-encoded is refused.
    const long = await create(acme.test, { url: `https://hooks.example.com/${"é".repeat(1000)}`, events: ["*"] });
    expect(long.status).toBe(422);
    expect(long.body.error).toMatchObject({ code: "validation_error", param: "url" });
  });
});

describe("webhooks: validation", () => {
  test.each([
    ["http://hooks.example.com/x", "Only HTTPS"],
    ["ftp://hooks.example.com/x", "Only HTTPS"],
    ["not a url", "absolute https"],
    ["https://user:pw@hooks.example.com/x", "credentials"],
  ])("url %s is 422 validation_error", async (url, message) => {
    const r = await create(acme.test, { url, events: ["*"] });
    expect(r.status).toBe(422);
    expect(r.body.error).toMatchObject({ code: "validation_error", param: "url" });
    expect(r.body.error.message).toContain(message);
  });

  test.each([
    [{ url: URL_OK, events: ["recording.exploded"] }, "events.0"],
    [{ url: URL_OK, events: [] }, "events"],
    [{ url: URL_OK }, "events"],
    [{ events: ["*"] }, "url"],
    [{ url: URL_OK, events: ["*"], include_device_events: "yes" }, "include_device_events"],
  ])("body %j is 422 naming %s", async (body, param) => {
    const r = await create(acme.test, body);
    expect(r.status).toBe(422);
    expect(r.body.error).toMatchObject({ code: "validation_error", param });
  });

  describe("PARLEY_WEBHOOK_DENY_PRIVATE=1", () => {
    let strict: typeof t;
    let tenant: ReturnType<typeof makeTenant>;
    beforeAll(async () => {
      strict = await makeTestApp({ env: { PARLEY_WEBHOOK_DENY_PRIVATE: "1" } });
      tenant = makeTenant(strict.deps, "strict");
    });

    test.each([
      "https://10.1.2.3/h",
      "https://172.20.0.1/h",
      "https://192.168.0.9/h",
      "https://100.64.0.1/h",
      "https://198.18.0.1/h",
      "https://198.19.255.254/h",
      "https://224.0.0.1/h",
      "https://239.255.255.250/h",
      "https://240.0.0.1/h",
      "https://255.255.255.255/h",
      "https://[fd00::1]/h",
      "https://[fec0::1]/h",
      "https://[ff02::1]/h",
      // IPv6 forms that carry an IPv4 address: URL rewrites them to hex groups.
      "https://[::ffff:a00:1]/h",
      "https://[64:ff9b::a00:1]/h",
      "https://[64:ff9b::192.168.1.1]/h",
      "https://[2002:c0a8:101::1]/h",
    ])("refuses %s", async (url) => {
      const r = await strict.call("POST", "/v1/webhooks", { key: tenant.test, body: { url, events: ["*"] } });
      expect(r.status).toBe(422);
      expect(r.body.error).toMatchObject({ code: "validation_error", param: "url" });
      expect(r.body.error.message).toContain("private networks");
    });

    test.each([
      "https://93.184.215.14/h",
      "https://198.20.0.1/h",
      "https://[2606:2800:21f:cb07:6820:80da:af6b:8b2c]/h",
      "https://[::ffff:93.184.215.14]/h",
      "https://[64:ff9b::5db8:d70e]/h",
    ])("accepts the public address %s", async (url) => {
      expect((await strict.call("POST", "/v1/webhooks", { key: tenant.test, body: { url, events: ["*"] } })).status).toBe(201);
    });

    test("a DNS lookup that hangs is a 422 after the timeout, not a hung request", async () => {
      const hangs = () => new Promise<never>(() => {});
      const verdict = await checkWebhookUrl("https://hooks.example.com/h", { denyPrivate: true, allowHosts: [] }, { resolve: hangs, timeoutMs: 50 });
      expect(verdict).toEqual({ param: "url", message: "The host hooks.example.com did not resolve within 50 ms." });
      expect(DNS_TIMEOUT_MS).toBeLessThanOrEqual(5_000);
    });
  });
});

describe("webhooks: device events need the enterprise plan and the opt-in", () => {
  test("403 without the plan, 403 naming device events without the opt-in, 201 with both", async () => {
    const optIn = await create(acme.test, { url: URL_OK, events: ["*"], include_device_events: true });
    expect(optIn.status).toBe(403);
    expect(optIn.body.error).toMatchObject({ code: "forbidden", param: "include_device_events" });
    expect(optIn.body.error.message).toContain("enterprise");

    setOrganizationPlan(t.deps.db, acme.project.organization_id, "enterprise");
    try {
      const noOptIn = await create(acme.test, { url: URL_OK, events: ["device.low_battery"] });
      expect(noOptIn.status).toBe(403);
      expect(noOptIn.body.error).toMatchObject({ code: "forbidden", param: "events" });
      const ok = await create(acme.test, { url: URL_OK, events: ["device.offline", "recording.created"], include_device_events: true });
      expect(ok.status).toBe(201);
      expect(ok.body.include_device_events).toBe(true);
    } finally {
      setOrganizationPlan(t.deps.db, acme.project.organization_id, "standard");
    }
  });
});

describe("webhooks: security", () => {
  test("another project and the other mode cannot see, delete or list an endpoint", async () => {
    const w = (await create(acme.test, { url: URL_OK, events: ["*"] })).body;
    for (const key of [other.test, other.live, acme.live]) {
      expect((await t.call("GET", `/v1/webhooks/${w.id}`, { key })).status).toBe(404);
      expect((await t.call("DELETE", `/v1/webhooks/${w.id}`, { key })).status).toBe(404);
      expect((await t.call("GET", `/v1/webhooks/${w.id}/deliveries`, { key })).status).toBe(404);
      expect((await t.call("GET", "/v1/webhooks", { key })).body.data.map((x: any) => x.id)).not.toContain(w.id);
    }
    expect((await t.call("GET", `/v1/webhooks/${w.id}`, { key: acme.test })).status).toBe(200);
  });

  test("restricted keys need webhooks:read to read and webhooks:write to change", async () => {
    const readOnly = acme.key("test", { scopes: ["webhooks:read"] });
    const writeOnly = acme.key("test", { scopes: ["webhooks:write"] });
    const unrelated = acme.key("test", { scopes: ["recordings:read"] });
    expect((await create(readOnly, { url: URL_OK, events: ["*"] })).status).toBe(403);
    expect((await t.call("GET", "/v1/webhooks", { key: readOnly })).status).toBe(200);
    const w = await create(writeOnly, { url: URL_OK, events: ["*"] });
    expect(w.status).toBe(201);
    expect((await t.call("GET", "/v1/webhooks", { key: writeOnly })).status).toBe(403);
    expect((await t.call("GET", `/v1/webhooks/${w.body.id}/deliveries`, { key: unrelated })).status).toBe(403);
    expect((await t.call("DELETE", `/v1/webhooks/${w.body.id}`, { key: readOnly })).status).toBe(403);
    expect((await t.call("DELETE", `/v1/webhooks/${w.body.id}`, { key: writeOnly })).status).toBe(204);
  });

  test("end-user-scoped keys and device tokens cannot manage webhooks", async () => {
    const eu = (await t.call("POST", "/v1/end-users", { key: acme.test, body: {} })).body;
    const scoped = acme.key("test", { endUserId: eu.id });
    const device = issueCredential(t.deps.db, {
      kind: "device",
      projectId: acme.project.id,
      mode: "test",
      deviceId: "dev_x",
      endUserId: eu.id,
      now: t.clock.now(),
    }).token;
    for (const key of [scoped, device]) {
      const r = await create(key, { url: URL_OK, events: ["*"] });
      expect(r.status).toBe(403);
      expect(r.body.error.code).toBe("forbidden");
      expect((await t.call("GET", "/v1/webhooks", { key })).status).toBe(403);
    }
  });

  test("no credential is 401", async () => {
    expect((await t.call("GET", "/v1/webhooks")).status).toBe(401);
    expect((await create("sk_test_nope", { url: URL_OK, events: ["*"] })).status).toBe(401);
  });
});

describe("webhooks: delivery log retention", () => {
  test("finished deliveries are purged 30 days after they end; pending ones stay", async () => {
    const w = (await create(acme.test, { url: "https://10.0.0.9:9/never", events: ["*"] })).body;
    const tenant = { projectId: acme.project.id, mode: "test" as const };
    for (let i = 0; i < 3; i++) t.deps.db.transaction(() => recordEvent(t.deps, tenant, "recording.created", { id: `rec_${i}` }, t.clock.now()))();
    fanOutEvents(t.deps.db, t.clock.now());
    const ids = t.deps.db
      .query<{ id: string }, [string]>("SELECT id FROM webhook_deliveries WHERE endpoint_id = ? ORDER BY id")
      .all(w.id)
      .map((r) => r.id);
    expect(ids).toHaveLength(3);
    const end = (id: string, status: string, at: Date) =>
      t.deps.db.query("UPDATE webhook_deliveries SET status = ?, completed_at = ? WHERE id = ?").run(status, at.toISOString(), id);
    end(ids[0]!, "succeeded", t.clock.now());
    end(ids[1]!, "failed", new Date(t.clock.now().getTime() + 86_400_000));
    t.clock.advance(30 * 86_400_000);
    await t.runTask("webhooks-purge-deliveries");
    const left = await t.call("GET", `/v1/webhooks/${w.id}/deliveries`, { key: acme.test });
    expect(left.body.data.map((d: any) => d.id).sort()).toEqual([ids[1], ids[2]]);
  });
});

describe("webhooks: attempts refused before any request", () => {
  const emitIn = (deps: typeof t.deps, projectId: string) =>
    deps.db.transaction(() => recordEvent(deps, { projectId, mode: "test" }, "recording.created", { id: "rec_x" }, deps.clock.now()))();

  test("a secret that cannot be unsealed is a recorded failed attempt, not a crash", async () => {
    const app = await makeTestApp();
    const tenant = makeTenant(app.deps);
    const w = (await app.call("POST", "/v1/webhooks", { key: tenant.test, body: { url: "https://10.0.0.9:9/x", events: ["*"] } })).body;
    app.deps.db.query("UPDATE webhook_endpoints SET secret_sealed = 'AAAA.BBBB.CCCC' WHERE id = ?").run(w.id);
    emitIn(app.deps, tenant.project.id);
    await app.deps.webhooks.drain();
    const d = (await app.call("GET", `/v1/webhooks/${w.id}/deliveries`, { key: tenant.test })).body.data[0];
    expect(d).toMatchObject({ status: "pending", attempt_count: 1 });
    expect(d.last_attempt.error).toContain("cannot be unsealed");
  });

  test("with PARLEY_WEBHOOK_DENY_PRIVATE=1 an endpoint registered before on a private host is refused at send time", async () => {
    const app = await makeTestApp();
    const tenant = makeTenant(app.deps);
    const w = (await app.call("POST", "/v1/webhooks", { key: tenant.test, body: { url: "https://10.9.8.7/x", events: ["*"] } })).body;
    emitIn(app.deps, tenant.project.id);
    const strict = buildDeps(loadConfig({ PARLEY_DATA_DIR: app.deps.config.dataDir, PARLEY_LOG_LEVEL: "silent", PARLEY_WEBHOOK_DENY_PRIVATE: "1" }), {
      clock: app.clock,
      log: createLogger("silent"),
    });
    try {
      await strict.webhooks.drain();
    } finally {
      strict.db.close();
    }
    const d = (await app.call("GET", `/v1/webhooks/${w.id}/deliveries`, { key: tenant.test })).body.data[0];
    expect(d).toMatchObject({ status: "pending", attempt_count: 1 });
    expect(d.last_attempt).toMatchObject({ response_status: null, latency_ms: 0 });
    expect(d.last_attempt.error).toContain("private networks");
  });
});

describe("webhooks: due deliveries are shared fairly", () => {
  // Offers named project.endpoint.n, due in that order within each endpoint.
  const offers = (spec: Record<string, number>): Offer[] =>
    Object.entries(spec).flatMap(([endpoint, n]) =>
      Array.from({ length: n }, (_, i) => ({
        id: `${endpoint}.${i}`,
        endpoint_id: endpoint,
        project_id: endpoint.split(".")[0]!,
        next_attempt_at: `2026-01-01T00:00:0${i}.000Z`,
      })),
    );
  const limits = { perEndpoint: 2, perProject: 3, limit: 64, busyEndpoints: {}, busyProjects: {} };

  test("projects take turns and endpoints within a project take turns, up to each cap", () => {
    const picked = pickFairly(offers({ "a.1": 5, "a.2": 5, "b.1": 1 }), limits).map((o) => o.id);
    expect(picked).toEqual(["a.1.0", "b.1.0", "a.2.0", "a.1.1"]);
  });

  test("the least busy project goes first; a saturated one gets nothing", () => {
    const busy = { ...limits, limit: 2, busyProjects: { a: 2, c: 3 }, busyEndpoints: { "b.1": 1 } };
    const picked = pickFairly(offers({ "a.1": 3, "b.1": 3, "c.1": 3 }), busy).map((o) => o.id);
    expect(picked).toEqual(["b.1.0", "a.1.0"]);
  });
});
