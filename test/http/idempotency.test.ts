import { beforeAll, describe, expect, test } from "bun:test";
import { Elysia } from "elysia";
import { idempotency } from "../../src/http/idempotency";
import { ApiError, errorHandling } from "../../src/http/errors";
import { stampRequestId } from "../../src/http/request-id";
import { createLogger } from "../../src/log";
import { makeTenant, makeTestApp } from "../helpers";

let t: Awaited<ReturnType<typeof makeTestApp>>;
let acme: ReturnType<typeof makeTenant>;

beforeAll(async () => {
  t = await makeTestApp();
  acme = makeTenant(t.deps, "acme");
});

const count = () => (t.deps.db.query("SELECT COUNT(*) AS n FROM end_users").get() as { n: number }).n;

describe("Idempotency-Key", () => {
  test("same key and payload replays the original response without a duplicate", async () => {
    const before = count();
    const headers = { "idempotency-key": "create-ada-1" };
    const first = await t.call("POST", "/v1/end-users", { key: acme.test, body: { name: "Ada" }, headers });
    const second = await t.call("POST", "/v1/end-users", { key: acme.test, body: { name: "Ada" }, headers });
    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    expect(second.body).toEqual(first.body);
    expect(second.headers.get("idempotent-replayed")).toBe("true");
    expect(count()).toBe(before + 1);
  });

  test("key order in the payload does not matter", async () => {
    const headers = { "idempotency-key": "order-1" };
    const a = await t.call("POST", "/v1/end-users", { key: acme.test, body: { name: "A", email: "a@x.io" }, headers });
    const b = await t.call("POST", "/v1/end-users", { key: acme.test, body: { email: "a@x.io", name: "A" }, headers });
    expect(b.body.id).toBe(a.body.id);
  });

  test("same key with a different payload is 409 idempotency_key_conflict", async () => {
    const headers = { "idempotency-key": "create-2" };
    await t.call("POST", "/v1/end-users", { key: acme.test, body: { name: "One" }, headers });
    const r = await t.call("POST", "/v1/end-users", { key: acme.test, body: { name: "Two" }, headers });
    expect(r.status).toBe(409);
    expect(r.body.error).toMatchObject({ code: "idempotency_key_conflict", param: "Idempotency-Key" });
  });

  test("a 4xx result is replayed as the same error", async () => {
    await t.call("POST", "/v1/end-users", { key: acme.test, body: { external_id: "taken" } });
    const headers = { "idempotency-key": "dup-ext" };
    const first = await t.call("POST", "/v1/end-users", { key: acme.test, body: { external_id: "taken" }, headers });
    expect(first.status).toBe(409);
    // Free the external_id: a fresh request would now succeed, the replay must not.
    const holder = (await t.call("GET", "/v1/end-users?external_id=taken", { key: acme.test })).body.data[0];
    await t.call("DELETE", `/v1/end-users/${holder.id}`, { key: acme.test });
    const replay = await t.call("POST", "/v1/end-users", { key: acme.test, body: { external_id: "taken" }, headers });
    expect(replay.status).toBe(409);
    expect(replay.body).toEqual(first.body);
  });

  test("keys are separate per project and per mode", async () => {
    const other = makeTenant(t.deps);
    const headers = { "idempotency-key": "shared-key" };
    const a = await t.call("POST", "/v1/end-users", { key: acme.test, body: {}, headers });
    const b = await t.call("POST", "/v1/end-users", { key: acme.live, body: {}, headers });
    const c = await t.call("POST", "/v1/end-users", { key: other.test, body: {}, headers });
    expect(new Set([a.body.id, b.body.id, c.body.id]).size).toBe(3);
  });

  test("keys expire after 24 hours", async () => {
    const headers = { "idempotency-key": "old-key" };
    const a = await t.call("POST", "/v1/end-users", { key: acme.test, body: { name: "x" }, headers });
    t.clock.advance(24 * 3600 * 1000 + 1);
    const b = await t.call("POST", "/v1/end-users", { key: acme.test, body: { name: "y" }, headers });
    expect(b.status).toBe(201);
    expect(b.body.id).not.toBe(a.body.id);
  });

  test.each(["", "has space", "x".repeat(256), "semi;colon", "dot.ted"])("malformed key %j is 400 invalid_request", async (key) => {
    const r = await t.call("POST", "/v1/end-users", { key: acme.test, body: {}, headers: { "idempotency-key": key } });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ code: "invalid_request", param: "Idempotency-Key" });
  });

  test("concurrent duplicates write once", async () => {
    const before = count();
    const headers = { "idempotency-key": "race-1" };
    const replies = await Promise.all(Array.from({ length: 5 }, () => t.call("POST", "/v1/end-users", { key: acme.test, body: { name: "race" }, headers })));
    expect(new Set(replies.map((r) => r.body.id)).size).toBe(1);
    expect(count()).toBe(before + 1);
  });

  test("a replay goes only to the credential that made the request: another key of the project gets 409, never the stored response", async () => {
    const before = count();
    const headers = { "idempotency-key": "whose-1" };
    const first = await t.call("POST", "/v1/end-users", { key: acme.test, body: { name: "Mine" }, headers });
    expect(first.status).toBe(201);
    const readOnly = acme.key("test", { scopes: ["end_users:read"] });
    const other = await t.call("POST", "/v1/end-users", { key: readOnly, body: { name: "Mine" }, headers });
    expect(other.status).toBe(409);
    expect(other.body.error).toMatchObject({ code: "idempotency_key_conflict", param: "Idempotency-Key" });
    expect(JSON.stringify(other.body)).not.toContain(first.body.id);
    expect(count()).toBe(before + 1);
  });

  test("claims left in flight by a dead process are released at boot, so a retry runs afresh", async () => {
    const { releaseAbandonedIdempotencyClaims } = await import("../../src/http/idempotency");
    const headers = { "idempotency-key": "crashed-1" };
    const now = t.clock.now().toISOString();
    t.deps.db
      .query(
        "INSERT INTO idempotency_keys (project_id, mode, operation, key, credential_id, request_hash, state, created_at) VALUES (?, 'test', 'POST /v1/end-users', 'crashed-1', NULL, 'x', 'in_flight', ?)",
      )
      .run(acme.project.id, now);
    expect(releaseAbandonedIdempotencyClaims(t.deps.db)).toBe(1);
    const retry = await t.call("POST", "/v1/end-users", { key: acme.test, body: { name: "After crash" }, headers });
    expect(retry.status).toBe(201);
  });

  /** A bare app with one idempotent route whose answers `outcomes` script, one a call. */
  function scripted(path: string, outcomes: (() => unknown)[]) {
    let calls = 0;
    const principal = { projectId: acme.project.id, mode: "test" as const, credentialId: "key_x" } as any;
    const app = new Elysia()
      .onRequest(({ set }) => stampRequestId(set.headers))
      .use(errorHandling(createLogger("silent")))
      .derive(() => ({ principal }))
      .use(idempotency(t.deps))
      .post(path, ({ body }) => outcomes[calls++]!() ?? { ok: calls, body }, { idempotent: true });
    const send = () =>
      app.handle(
        new Request(`http://localhost${path}`, {
          method: "POST",
          headers: { "idempotency-key": `${path.slice(1)}-1`, "content-type": "application/json" },
          body: "{}",
        }),
      );
    return { send, calls: () => calls };
  }

  test("a 5xx is not kept: the client sees 500 internal_error with no internals, and the retry runs again", async () => {
    const flaky = scripted("/flaky", [
      () => {
        throw new Error("disk on fire at /secret/path");
      },
      () => undefined,
    ]);
    const first = await flaky.send();
    expect(first.status).toBe(500);
    const body = await first.json();
    expect(body.error.code).toBe("internal_error");
    expect(body.error.request_id).toStartWith("req_");
    expect(JSON.stringify(body)).not.toContain("secret");
    const second = await flaky.send();
    expect(second.status).toBe(200);
    expect(await second.json()).toEqual({ ok: 2, body: {} });
    expect(flaky.calls()).toBe(2);
  });

  test.each([
    ["upload_verification_pending", 425],
    ["rate_limited", 429],
    ["service_unavailable", 503],
    ["insufficient_storage", 507],
  ] as const)("%s (%i) is never kept: the retry runs again", async (code, status) => {
    const later = scripted(`/later-${status}`, [
      () => {
        throw new ApiError(code, "Not now.");
      },
      () => undefined,
    ]);
    expect((await later.send()).status).toBe(status);
    const retry = await later.send();
    expect(retry.status).toBe(200);
    expect(retry.headers.get("idempotent-replayed")).toBeNull();
    expect(later.calls()).toBe(2);
  });

  test.each([
    ["bad_request", 400],
    ["forbidden", 403],
    ["not_found", 404],
    ["resource_conflict", 409],
    ["payload_too_large", 413],
    ["validation_error", 422],
  ] as const)("%s (%i) is kept: the retry gets the same error without running", async (code, status) => {
    const refused = scripted(`/refused-${status}`, [
      () => {
        throw new ApiError(code, "No.");
      },
      () => undefined,
    ]);
    const first = await refused.send();
    expect(first.status).toBe(status);
    const replay = await refused.send();
    expect(replay.status).toBe(status);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(await replay.json()).toEqual(await first.json());
    expect(refused.calls()).toBe(1);
  });
});
