import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHmac } from "node:crypto";
import { buildDeps } from "../../src/boot";
import { ManualClock } from "../../src/clock";
import type { Deps } from "../../src/deps";
import type { Resolver } from "../../src/dns";
import { type EventType, recordEvent } from "../../src/events/outbox";
import type { Mode } from "../../src/tenancy";
import { createLogger } from "../../src/log";
import { setOrganizationPlan } from "../../src/modules/projects/store";
import { fanOutEvents, leaseDelivery } from "../../src/modules/webhooks/delivery-store";
import { CONCURRENCY, DISABLE_AFTER_MS } from "../../src/modules/webhooks/dispatcher";
import { makeTenant, makeTestApp, waitFor } from "../helpers";
import { makeTestCa, type Receiver, rerunTrustingCa, startGatedRelay, startReceiver, type TlsFiles, trustedTlsFiles } from "../support/https-receiver";
import { standInDns } from "../support/stand-in-dns";

// Delivery over real HTTPS. Bun trusts NODE_EXTRA_CA_CERTS only if it is set when the
// process starts, so this file re-runs itself in a child `bun test` that trusts a
// throwaway CA; the child runs the real tests below.
const tls = trustedTlsFiles();

if (!tls) {
  test("webhook delivery suite, in a child process trusting a test CA through NODE_EXTRA_CA_CERTS", async () => {
    // The child gets the suite's per-test limit (npm test's --timeout): bun's 5 s default failed a restart case on a busy box.
    const { code, output } = await rerunTrustingCa(["test", "--timeout", "30000", import.meta.path]);
    if (code !== 0) console.error(output);
    else console.log(`child: ${output.match(/\d+ pass/)?.[0]}, ${output.match(/\d+ fail/)?.[0]}`);
    expect(output).toMatch(/\b[1-9]\d* pass/);
    expect(output).toMatch(/\b0 fail/);
    expect(code).toBe(0);
  }, 180_000);
} else {
  deliverySuite(tls);
}

type App = Awaited<ReturnType<typeof makeTestApp>>;

function deliverySuite(tls: TlsFiles) {
  let receiver: Receiver;
  beforeAll(() => {
    receiver = startReceiver(tls);
  });
  afterAll(() => receiver.stop());

  /**
   * An app with a shortened schedule, a project, and a helper to emit an outbox event.
   * The receiver is on this box, so its address is an allowed host; `dns` stands in for DNS.
   */
  async function setup(env: Record<string, string> = {}, dns?: Resolver) {
    const t = await makeTestApp({
      env: { PARLEY_WEBHOOK_RETRY_DELAYS: "60,300", PARLEY_WEBHOOK_TIMEOUT_MS: "2000", PARLEY_WEBHOOK_ALLOW_HOSTS: "127.0.0.1", ...env },
      dns,
    });
    const acme = makeTenant(t.deps);
    receiver.behave(() => ({ status: 200 }));
    receiver.received.length = 0;
    const emit = (
      type: EventType = "recording.created",
      data: Record<string, unknown> = { id: "rec_1" },
      mode: Mode = "test",
      projectId = acme.project.id,
      deps: Deps = t.deps,
    ) => deps.db.transaction(() => recordEvent(deps, { projectId, mode }, type, data, deps.clock.now()))();
    const hook = async (path: string, body: Record<string, unknown> = {}, key = acme.test) => {
      const r = await t.call("POST", "/v1/webhooks", { key, body: { url: `${receiver.url}${path}`, events: ["*"], ...body } });
      expect(r.status).toBe(201);
      return r.body as { id: string; secret: string };
    };
    const drain = (deps: Deps = t.deps) => deps.webhooks.drain();
    const deliveries = async (id: string, app: App = t) => (await app.call("GET", `/v1/webhooks/${id}/deliveries`, { key: acme.test })).body;
    return { t, acme, emit, hook, drain, deliveries };
  }

  describe("delivery", () => {
    test("the envelope is signed over the raw body, both X-Parley-Signature and Standard Webhooks", async () => {
      const { emit, hook, drain, deliveries } = await setup();
      const wh = await hook("/signed");
      const event = emit("recording.uploaded", { id: "rec_9", duration_seconds: 12.5, format: "wav" });
      await drain();
      expect(receiver.received).toHaveLength(1);
      const got = receiver.received[0]!;
      expect(JSON.parse(got.body)).toEqual({
        id: event.id,
        type: "recording.uploaded",
        created_at: event.created_at,
        data: { id: "rec_9", duration_seconds: 12.5, format: "wav" },
      });
      expect(got.headers.get("content-type")).toBe("application/json");
      expect(got.headers.get("x-parley-signature")).toBe(`sha256=${createHmac("sha256", wh.secret).update(got.body).digest("hex")}`);
      const id = got.headers.get("webhook-id")!;
      const ts = got.headers.get("webhook-timestamp")!;
      expect(id).toBe(event.id);
      const standard = createHmac("sha256", Buffer.from(wh.secret.slice(6), "base64"))
        .update(`${id}.${ts}.${got.body}`)
        .digest("base64");
      expect(got.headers.get("webhook-signature")).toBe(`v1,${standard}`);
      // A tampered body would not verify.
      expect(createHmac("sha256", wh.secret).update(got.body.replace("rec_9", "rec_8")).digest("hex")).not.toBe(
        got.headers.get("x-parley-signature")!.slice(7),
      );
      const log = await deliveries(wh.id);
      expect(log.data).toHaveLength(1);
      expect(log.data[0]).toMatchObject({
        webhook_id: wh.id,
        event_id: event.id,
        event_type: "recording.uploaded",
        status: "succeeded",
        attempt_count: 1,
        next_attempt_at: null,
      });
      expect(log.data[0].last_attempt).toMatchObject({ response_status: 200, response_snippet: "ok", error: null });
      expect(log.data[0].last_attempt.latency_ms).toBeNumber();
    });

    test("once the periodic sweep has run, a new event is sent at once, woken by the event bus", async () => {
      const { t, emit, hook, drain } = await setup();
      await hook("/woken");
      await t.runTask("webhooks-dispatch");
      const event = emit();
      await waitFor("the woken delivery", () => receiver.received.length > 0);
      expect(receiver.received.map((r) => JSON.parse(r.body).id)).toEqual([event.id]);
      await drain();
    });

    test("retries on 500 follow the schedule with the same evt_ id, then the delivery fails", async () => {
      const { t, emit, hook, drain, deliveries } = await setup();
      const wh = await hook("/failing");
      receiver.behave(() => ({ status: 500, body: "database down" }));
      const event = emit();
      await drain();
      let d = (await deliveries(wh.id)).data[0];
      expect(d).toMatchObject({ status: "pending", attempt_count: 1 });
      expect(d.last_attempt).toMatchObject({ response_status: 500, response_snippet: "database down", error: "HTTP 500" });
      expect(d.next_attempt_at).toBe(new Date(t.clock.now().getTime() + 60_000).toISOString());
      t.clock.advance(59_000);
      await drain();
      expect(receiver.received).toHaveLength(1); // not due yet
      t.clock.advance(1_000);
      await drain();
      expect(receiver.received).toHaveLength(2);
      t.clock.advance(300_000);
      await drain();
      expect(receiver.received).toHaveLength(3);
      d = (await deliveries(wh.id)).data[0];
      expect(d).toMatchObject({ status: "failed", attempt_count: 3, next_attempt_at: null });
      expect(d.attempts).toHaveLength(3);
      t.clock.advance(86_400_000);
      await drain();
      expect(receiver.received).toHaveLength(3);
      expect(new Set(receiver.received.map((r) => JSON.parse(r.body).id))).toEqual(new Set([event.id]));
      expect(new Set(receiver.received.map((r) => r.headers.get("webhook-id")))).toEqual(new Set([event.id]));
    });

    test("a response slower than PARLEY_WEBHOOK_TIMEOUT_MS is a failure, retried", async () => {
      const { t, emit, hook, drain, deliveries } = await setup({ PARLEY_WEBHOOK_TIMEOUT_MS: "200" });
      const wh = await hook("/slow");
      receiver.behave(() => ({ status: 200, delayMs: 1500 }));
      const event = emit();
      await drain();
      let d = (await deliveries(wh.id)).data[0];
      expect(d).toMatchObject({ status: "pending", attempt_count: 1 });
      expect(d.last_attempt).toMatchObject({ response_status: null, error: "timed out after 200 ms" });
      receiver.behave(() => ({ status: 204 }));
      t.clock.advance(60_000);
      await drain();
      d = (await deliveries(wh.id)).data[0];
      expect(d).toMatchObject({ status: "succeeded", attempt_count: 2 });
      expect(receiver.received.map((r) => JSON.parse(r.body).id)).toEqual([event.id, event.id]);
    });

    test("an untrusted certificate is a failed attempt (TLS is verified)", async () => {
      const { emit, drain, deliveries, t, acme } = await setup();
      const rogue = startReceiver(makeTestCa(undefined, "Rogue CA"));
      try {
        const wh = (await t.call("POST", "/v1/webhooks", { key: acme.test, body: { url: rogue.url, events: ["*"] } })).body;
        emit();
        await drain();
        const d = (await deliveries(wh.id)).data[0];
        expect(d).toMatchObject({ status: "pending", attempt_count: 1 });
        expect(d.last_attempt.response_status).toBeNull();
        expect(d.last_attempt.error).toMatch(/certificate|verify/i);
      } finally {
        rogue.stop();
      }
    });

    test("DELETE cancels an attempt already on its way: it never reaches the receiver", async () => {
      const { t, acme, emit, drain } = await setup({ PARLEY_WEBHOOK_TIMEOUT_MS: "20000" });
      const relay = await startGatedRelay(receiver.url);
      try {
        const wh = (await t.call("POST", "/v1/webhooks", { key: acme.test, body: { url: `${relay.url}/cancelled`, events: ["*"] } })).body;
        emit();
        const done = drain();
        await waitFor("the connection to the relay", () => relay.connections() > 0);
        expect(relay.connections()).toBe(1); // connected, held before the TLS handshake
        expect((await t.call("DELETE", `/v1/webhooks/${wh.id}`, { key: acme.test })).status).toBe(204);
        relay.open();
        await done;
        expect(receiver.received).toHaveLength(0);
      } finally {
        relay.stop();
      }
    }, 30_000);

    test("after DELETE nothing more is delivered, neither retries nor new events", async () => {
      const { t, acme, emit, hook, drain } = await setup();
      const wh = await hook("/deleted");
      receiver.behave(() => ({ status: 500 }));
      emit();
      await drain();
      expect(receiver.received).toHaveLength(1);
      expect((await t.call("DELETE", `/v1/webhooks/${wh.id}`, { key: acme.test })).status).toBe(204);
      receiver.behave(() => ({ status: 200 }));
      emit();
      t.clock.advance(3_600_000);
      await drain();
      expect(receiver.received).toHaveLength(1);
      expect(t.deps.db.query("SELECT COUNT(*) AS n FROM webhook_deliveries").get()).toEqual({ n: 0 });
    });
  });

  describe("the address checked is the address connected to", () => {
    // receiver.test is known only to the stand-in DNS: a request that reaches the receiver
    // went to the address the policy checked, not to one the system resolver chose.
    const port = () => new URL(receiver.url).port;

    test("a name is delivered over a connection to its checked address, TLS verified for the name", async () => {
      const { emit, drain, deliveries, t, acme } = await setup({ PARLEY_WEBHOOK_ALLOW_HOSTS: "receiver.test" }, standInDns({ "receiver.test": ["127.0.0.1"] }));
      const wh = (await t.call("POST", "/v1/webhooks", { key: acme.test, body: { url: `https://receiver.test:${port()}/hooks/pinned`, events: ["*"] } })).body;
      emit();
      await drain();
      expect(receiver.received.map((r) => [r.path, r.headers.get("host")])).toEqual([["/hooks/pinned", `receiver.test:${port()}`]]);
      expect((await deliveries(wh.id)).data[0]).toMatchObject({ status: "succeeded", attempt_count: 1 });
    });

    test("an address that cannot be reached gives way to the name's next one", async () => {
      const { emit, drain, deliveries, t, acme } = await setup(
        { PARLEY_WEBHOOK_ALLOW_HOSTS: "receiver.test" },
        standInDns({ "receiver.test": ["::1", "127.0.0.1"] }),
      );
      const wh = (await t.call("POST", "/v1/webhooks", { key: acme.test, body: { url: `https://receiver.test:${port()}/hooks/second`, events: ["*"] } })).body;
      emit();
      await drain();
      expect(receiver.received.map((r) => r.path)).toEqual(["/hooks/second"]);
      expect((await deliveries(wh.id)).data[0]).toMatchObject({ status: "succeeded", attempt_count: 1 });
    });

    test("the certificate must still match the name", async () => {
      const { emit, drain, deliveries, t, acme } = await setup({ PARLEY_WEBHOOK_ALLOW_HOSTS: "impostor.test" }, standInDns({ "impostor.test": ["127.0.0.1"] }));
      const wh = (await t.call("POST", "/v1/webhooks", { key: acme.test, body: { url: `https://impostor.test:${port()}/hooks/x`, events: ["*"] } })).body;
      emit();
      await drain();
      expect(receiver.received).toHaveLength(0);
      const d = (await deliveries(wh.id)).data[0];
      expect(d.last_attempt.response_status).toBeNull();
      expect(d.last_attempt.error).toMatch(/certificate|altname|verify/i);
    });

    test("a name rebound to loopback after creation is refused before connecting: nothing reaches the receiver, nothing is read back", async () => {
      // The receiver's address is allowed as a host, but not as the answer for another name.
      const flip = standInDns({ "flip.test": (n) => (n === 1 ? ["192.0.2.10"] : ["127.0.0.1"]) });
      const { emit, drain, deliveries, t, acme } = await setup({}, flip);
      receiver.behave(() => ({ status: 200, body: "secret from the loopback service" }));
      const wh = (await t.call("POST", "/v1/webhooks", { key: acme.test, body: { url: `https://flip.test:${port()}/hooks/rebound`, events: ["*"] } })).body;
      expect(wh.id).toMatch(/^wh_/);
      emit();
      await drain();
      expect(receiver.received).toHaveLength(0);
      const d = (await deliveries(wh.id)).data[0];
      expect(d.last_attempt).toMatchObject({ response_status: null, response_snippet: null });
      expect(d.last_attempt.error).toContain("loopback, link-local or cloud metadata");
    });
  });

  describe("routing", () => {
    test("events reach only endpoints of the same project and mode", async () => {
      const { t, acme, emit, hook, drain } = await setup();
      const other = makeTenant(t.deps);
      await hook("/acme-test");
      await hook("/acme-live", {}, acme.live);
      await hook("/other-test", {}, other.test);
      emit("recording.created", { id: "rec_a" }, "test");
      emit("recording.created", { id: "rec_b" }, "live");
      emit("recording.created", { id: "rec_c" }, "test", other.project.id);
      await drain();
      const seen = receiver.received.map((r) => `${r.path}:${JSON.parse(r.body).data.id}`).sort();
      expect(seen).toEqual(["/hooks/acme-live:rec_b", "/hooks/acme-test:rec_a", "/hooks/other-test:rec_c"]);
    });

    test("event filters, and device events only with the opt-in on an enterprise plan", async () => {
      const { t, acme, emit, hook, drain } = await setup();
      await hook("/only-transcripts", { events: ["transcription.completed"] });
      await hook("/star");
      setOrganizationPlan(t.deps.db, acme.project.organization_id, "enterprise");
      try {
        await hook("/devices", { include_device_events: true });
        emit("recording.created");
        emit("transcription.completed");
        emit("device.low_battery", { id: "dev_1", battery_percent: 12 });
        await drain();
        const seen = receiver.received.map((r) => `${r.path}:${JSON.parse(r.body).type}`).sort();
        expect(seen).toEqual([
          "/hooks/devices:device.low_battery",
          "/hooks/devices:recording.created",
          "/hooks/devices:transcription.completed",
          "/hooks/only-transcripts:transcription.completed",
          "/hooks/star:recording.created",
          "/hooks/star:transcription.completed",
        ]);
        // A downgraded organization stops receiving device events.
        setOrganizationPlan(t.deps.db, acme.project.organization_id, "standard");
        receiver.received.length = 0;
        emit("device.offline", { id: "dev_1", hours_offline: 30 });
        await drain();
        expect(receiver.received).toHaveLength(0);
      } finally {
        setOrganizationPlan(t.deps.db, acme.project.organization_id, "standard");
      }
    });

    test("a slow endpoint does not hold back another endpoint's deliveries", async () => {
      const { emit, hook, drain, deliveries } = await setup({ PARLEY_WEBHOOK_TIMEOUT_MS: "20000" });
      const slow = await hook("/slow");
      await hook("/fast");
      // The slow receiver answers nothing until the gate opens.
      let open!: () => void;
      const gate = new Promise<void>((resolve) => (open = resolve));
      receiver.behave((r) => (r.path.endsWith("/slow") ? { status: 200, until: gate } : { status: 200 }));
      for (let i = 0; i < 10; i++) emit("recording.created", { id: `rec_${i}` });
      const done = drain();
      const count = (path: string) => receiver.received.filter((r) => r.path.endsWith(path)).length;
      await waitFor("the fast endpoint's ten deliveries", () => count("/fast") >= 10);
      expect(count("/fast")).toBe(10);
      // The slow endpoint holds at most its own 4 slots, and none of its attempts has finished.
      expect(count("/slow")).toBeLessThanOrEqual(4);
      expect((await deliveries(slow.id)).data.every((d: any) => d.attempt_count === 0)).toBe(true);
      open();
      await done;
      expect(count("/slow")).toBe(10);
      expect((await deliveries(slow.id)).data.every((d: any) => d.status === "succeeded")).toBe(true);
    }, 30_000);

    test("dead endpoints of one project do not delay another project's first attempt", async () => {
      const { t, emit, hook, drain } = await setup({ PARLEY_WEBHOOK_TIMEOUT_MS: "20000" });
      const other = makeTenant(t.deps);
      // Project A: 20 endpoints that answer nothing until the gate opens, 5 events each.
      let open!: () => void;
      const gate = new Promise<void>((resolve) => (open = resolve));
      receiver.behave((r) => (r.path.includes("/dead-") ? { status: 200, until: gate } : { status: 200 }));
      for (let i = 0; i < 20; i++) await hook(`/dead-${i}`);
      for (let i = 0; i < 5; i++) emit("recording.created", { id: `rec_${i}` });
      await t.runTask("webhooks-dispatch"); // serve mode: from now on each event wakes the dispatcher
      const paths = (part: string) => receiver.received.filter((r) => r.path.includes(part)).map((r) => r.path);
      await waitFor("project A's slots taken", () => paths("/dead-").length >= CONCURRENCY.perProject);
      // A holds its project's slots only, one per endpoint before any endpoint gets a second.
      expect(paths("/dead-")).toHaveLength(CONCURRENCY.perProject);
      expect(new Set(paths("/dead-")).size).toBe(CONCURRENCY.perProject);
      // Project B's event goes out while all of A's attempts still hang.
      await hook("/alive", {}, other.test);
      emit("recording.created", { id: "rec_b" }, "test", other.project.id);
      await waitFor("project B's delivery", () => paths("/alive").length > 0);
      expect(paths("/alive")).toHaveLength(1);
      expect(paths("/dead-")).toHaveLength(CONCURRENCY.perProject);
      open();
      await drain();
      expect(paths("/dead-")).toHaveLength(100);
    }, 60_000);
  });

  describe("durability", () => {
    test("a restart mid-schedule resumes the retries from the database", async () => {
      const { t, emit, hook, drain, deliveries } = await setup();
      const wh = await hook("/restart");
      receiver.behave(() => ({ status: 503 }));
      const event = emit();
      await drain();
      // A new process: new Deps on the same data directory (same server secret file), a later clock.
      const clock = new ManualClock(new Date(t.clock.now().getTime() + 61_000));
      const restarted = buildDeps(t.deps.config, { clock, log: createLogger("silent") });
      receiver.behave(() => ({ status: 200 }));
      await drain(restarted);
      expect(receiver.received.map((r) => JSON.parse(r.body).id)).toEqual([event.id, event.id]);
      expect(receiver.received[1]!.headers.get("x-parley-signature")).toBe(
        `sha256=${createHmac("sha256", wh.secret).update(receiver.received[1]!.body).digest("hex")}`,
      );
      expect((await deliveries(wh.id)).data[0]).toMatchObject({ status: "succeeded", attempt_count: 2 });
      restarted.db.close();
    });

    test("an attempt leased by a process that died is taken back by the next one", async () => {
      const { t, emit, hook, drain } = await setup();
      await hook("/crashed");
      const event = emit();
      // The dead process fanned the event out and leased the delivery, then died before recording anything.
      fanOutEvents(t.deps.db, t.clock.now());
      const row = t.deps.db.query<{ id: string }, []>("SELECT id FROM webhook_deliveries").get()!;
      expect(leaseDelivery(t.deps.db, row.id, "whw_dead", t.clock.now(), 60_000)).toBe(true);
      const restarted = buildDeps(t.deps.config, { clock: new ManualClock(t.clock.now()), log: createLogger("silent") });
      await drain(restarted);
      expect(receiver.received.map((r) => JSON.parse(r.body).id)).toEqual([event.id]);
      restarted.db.close();
    });
  });

  describe("delivery log, retry and disabling", () => {
    test("POST .../retry replays a failed delivery now with the same evt_ id", async () => {
      const { t, acme, emit, hook, drain, deliveries } = await setup({ PARLEY_WEBHOOK_RETRY_DELAYS: "1" });
      const wh = await hook("/replay");
      receiver.behave(() => ({ status: 500 }));
      const event = emit();
      await drain();
      t.clock.advance(1000);
      await drain();
      const failed = (await deliveries(wh.id)).data[0];
      expect(failed).toMatchObject({ status: "failed", attempt_count: 2 });
      expect((await t.call("GET", `/v1/webhooks/${wh.id}/deliveries?status=failed`, { key: acme.test })).body.total).toBe(1);
      receiver.behave(() => ({ status: 200 }));
      const retry = await t.call("POST", `/v1/webhooks/${wh.id}/deliveries/${failed.id}/retry`, { key: acme.test });
      expect(retry.status).toBe(202);
      expect(retry.body).toMatchObject({ id: failed.id, status: "pending", next_attempt_at: t.clock.now().toISOString() });
      await drain();
      expect((await deliveries(wh.id)).data[0]).toMatchObject({ status: "succeeded", attempt_count: 3 });
      expect(receiver.received.map((r) => JSON.parse(r.body).id)).toEqual([event.id, event.id, event.id]);
      // Errors and isolation.
      expect((await t.call("POST", `/v1/webhooks/${wh.id}/deliveries/whd_nope/retry`, { key: acme.test })).status).toBe(404);
      expect((await t.call("POST", `/v1/webhooks/${wh.id}/deliveries/${failed.id}/retry`, { key: acme.live })).status).toBe(404);
      expect(
        (await t.call("POST", `/v1/webhooks/${wh.id}/deliveries/${failed.id}/retry`, { key: acme.key("test", { scopes: ["webhooks:read"] }) })).status,
      ).toBe(403);
    });

    test("an endpoint failing for 3 days is disabled; a successful manual retry enables it again", async () => {
      const { t, acme, emit, hook, drain, deliveries } = await setup({ PARLEY_WEBHOOK_RETRY_DELAYS: "60" });
      const wh = await hook("/dying");
      receiver.behave(() => ({ status: 500 }));
      const endpoint = async () => (await t.call("GET", `/v1/webhooks/${wh.id}`, { key: acme.test })).body;
      emit();
      await drain();
      const started = t.clock.now().getTime();
      expect(await endpoint()).toMatchObject({ status: "enabled", failing_since: new Date(started).toISOString() });
      // One event every 12 hours, each failing: a continuous streak.
      while (t.clock.now().getTime() + 12 * 3_600_000 < started + DISABLE_AFTER_MS) {
        t.clock.advance(12 * 3_600_000);
        emit();
        await drain();
        expect(await endpoint()).toMatchObject({ status: "enabled", failing_since: new Date(started).toISOString() });
      }
      t.clock.advance(started + DISABLE_AFTER_MS - t.clock.now().getTime());
      emit();
      await drain(); // this failure comes 3 days after the first
      expect(await endpoint()).toMatchObject({ status: "disabled", disabled_at: t.clock.now().toISOString() });
      const sent = receiver.received.length;
      emit();
      t.clock.advance(3_600_000);
      await drain();
      expect(receiver.received).toHaveLength(sent);
      const log = (await deliveries(wh.id)).data;
      expect(log).toHaveLength(7);
      expect(log.every((d: any) => d.status === "failed")).toBe(true);
      receiver.behave(() => ({ status: 200 }));
      expect((await t.call("POST", `/v1/webhooks/${wh.id}/deliveries/${log[0].id}/retry`, { key: acme.test })).status).toBe(202);
      await drain();
      expect((await t.call("GET", `/v1/webhooks/${wh.id}`, { key: acme.test })).body).toMatchObject({
        status: "enabled",
        disabled_at: null,
        failing_since: null,
      });
    });

    test("failures days apart are not continuous failure: a failure after a quiet spell starts a new streak", async () => {
      const { t, acme, emit, hook, drain } = await setup({ PARLEY_WEBHOOK_RETRY_DELAYS: "60" });
      const wh = await hook("/quiet");
      receiver.behave(() => ({ status: 500 }));
      const endpoint = async () => (await t.call("GET", `/v1/webhooks/${wh.id}`, { key: acme.test })).body;
      emit();
      await drain();
      t.clock.advance(60_000);
      await drain(); // the last retry fails too: the delivery is over
      // Four days without traffic, then one more failure.
      t.clock.advance(4 * 86_400_000);
      emit();
      await drain();
      expect(await endpoint()).toMatchObject({ status: "enabled", disabled_at: null, failing_since: t.clock.now().toISOString() });
    });
  });
}
