import { beforeAll, describe, expect, test } from "bun:test";
import { makeTenant, makeTestApp } from "../helpers";

let t: Awaited<ReturnType<typeof makeTestApp>>;
let acme: ReturnType<typeof makeTenant>;

beforeAll(async () => {
  t = await makeTestApp();
  acme = makeTenant(t.deps, "acme");
});

describe("request ids and error bodies", () => {
  test("every response has a req_ Request-Id, repeated in error bodies", async () => {
    const ok = await t.call("GET", "/v1/end-users", { key: acme.test });
    expect(ok.headers.get("request-id")).toMatch(/^req_/);
    const err = await t.call("GET", "/v1/end-users/eu_missing", { key: acme.test });
    expect(err.body.error.request_id).toBe(err.headers.get("request-id"));
    expect(Object.keys(err.body)).toEqual(["error"]);
  });

  test("malformed JSON is 400 invalid_request", async () => {
    const r = await t.call("POST", "/v1/end-users", { key: acme.test, rawBody: "{oops", headers: { "content-type": "application/json" } });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe("invalid_request");
  });

  test("bodies are bounded: over 1 MiB is 413, nesting past 32 levels is 400, neither reaches the validator", async () => {
    const big = await t.call("POST", "/v1/end-users", { key: acme.test, body: { metadata: { blob: "x".repeat(1024 * 1024) } } });
    expect(big.status).toBe(413);
    expect(big.body.error.code).toBe("payload_too_large");
    const chunked = new ReadableStream({
      start(c) {
        for (let i = 0; i < 3; i++) c.enqueue(new TextEncoder().encode(`{"name":"${"y".repeat(600 * 1024)}"}`));
        c.close();
      },
    });
    const streamed = await t.app.handle(
      new Request("http://localhost/v1/end-users", {
        method: "POST",
        headers: { authorization: `Bearer ${acme.test}`, "content-type": "application/json" },
        body: chunked,
      }),
    );
    expect(streamed.status).toBe(413);
    const deep = await t.call("POST", "/v1/end-users", {
      key: acme.test,
      rawBody: `{"metadata":${"[".repeat(100_000)}${"]".repeat(100_000)}}`,
      headers: { "content-type": "application/json" },
    });
    expect(deep.status).toBe(400);
    expect(deep.body.error.code).toBe("invalid_request");
    const strings = await t.call("POST", "/v1/end-users", { key: acme.test, body: { name: '[[[[{{{{\\"', metadata: { a: { b: { c: 1 } } } } });
    expect(strings.status).toBe(201);
  });

  test("request bodies are JSON only: a form body is 400, an empty body with any type is {}", async () => {
    const form = await t.call("POST", "/v1/end-users", {
      key: acme.test,
      rawBody: "name=Ada",
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect(form.status).toBe(400);
    expect(form.body.error.code).toBe("invalid_request");
    const empty = await t.call("POST", "/v1/end-users", { key: acme.test, rawBody: "", headers: { "content-type": "text/plain" } });
    expect(empty.status).toBe(201);
  });

  test("an unknown field of a strict body is 422 validation_error with param naming it", async () => {
    const r = await t.call("POST", "/v1/transcriptions", { key: acme.test, body: { recording_id: "rec_x", bogus: 1 } });
    expect(r.status).toBe(422);
    expect(r.body.error).toMatchObject({ code: "validation_error", param: "bogus" });
  });

  test("unknown routes are 404 not_found in the error body", async () => {
    const r = await t.call("GET", "/v1/no-such-thing", { key: acme.test });
    expect(r.status).toBe(404);
    expect(r.body.error.code).toBe("not_found");
  });
});

describe("Parley-Version", () => {
  test("every response names the version", async () => {
    expect((await t.call("GET", "/v1/end-users", { key: acme.test })).headers.get("parley-version")).toBe("2025-01-15");
    expect((await t.call("GET", "/v1/end-users")).headers.get("parley-version")).toBe("2025-01-15");
  });

  test("the current version is accepted", async () => {
    expect((await t.call("GET", "/v1/end-users", { key: acme.test, headers: { "parley-version": "2025-01-15" } })).status).toBe(200);
  });

  test.each(["yesterday", "2025-13-01", "2025-02-30", "20250115"])("malformed %j is 400 invalid_request", async (v) => {
    const r = await t.call("GET", "/v1/end-users", { key: acme.test, headers: { "parley-version": v } });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ code: "invalid_request", param: "Parley-Version" });
  });

  test("a well-formed unknown date is 400 unsupported_version", async () => {
    const r = await t.call("GET", "/v1/end-users", { key: acme.test, headers: { "parley-version": "2024-06-01" } });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ code: "unsupported_version", param: "Parley-Version" });
  });
});

describe("pagination", () => {
  test("walks every item once, newest first, with an opaque cursor", async () => {
    const tenant = makeTenant(t.deps);
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) {
      ids.push((await t.call("POST", "/v1/end-users", { key: tenant.test, body: { name: `u${i}` } })).body.id);
      if (i % 2) t.clock.advance(1); // some share a timestamp: the id breaks ties
    }
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const r = await t.call("GET", `/v1/end-users?limit=3${cursor ? `&cursor=${cursor}` : ""}`, { key: tenant.test });
      expect(r.body.total).toBe(7);
      seen.push(...r.body.data.map((u: any) => u.id));
      cursor = r.body.next_cursor;
      expect(r.body.has_more).toBe(Boolean(cursor));
      if (!r.body.has_more) expect("next_cursor" in r.body).toBe(false);
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual([...ids].reverse());
  });

  test("default limit is 20", async () => {
    const tenant = makeTenant(t.deps);
    for (let i = 0; i < 21; i++) await t.call("POST", "/v1/end-users", { key: tenant.test, body: {} });
    const r = await t.call("GET", "/v1/end-users", { key: tenant.test });
    expect(r.body.data).toHaveLength(20);
    expect(r.body.has_more).toBe(true);
  });

  test.each(["limit=0", "limit=101", "limit=abc"])("%s is 422 naming limit", async (q) => {
    const r = await t.call("GET", `/v1/end-users?${q}`, { key: acme.test });
    expect(r.status).toBe(422);
    expect(r.body.error).toMatchObject({ code: "validation_error", param: "limit" });
  });

  test("a cursor we did not issue is 400 invalid_request", async () => {
    const r = await t.call("GET", "/v1/end-users?cursor=garbage", { key: acme.test });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ code: "invalid_request", param: "cursor" });
  });
});

describe("authentication", () => {
  test("a revoked key is 401", async () => {
    const { revokeApiKey, createApiKey } = await import("../../src/modules/keys/service");
    const k = createApiKey(t.deps.db, { project: "acme", mode: "test" }, t.clock.now());
    expect((await t.call("GET", "/v1/end-users", { key: k.key })).status).toBe(200);
    revokeApiKey(t.deps, k.id, t.clock.now());
    expect((await t.call("GET", "/v1/end-users", { key: k.key })).status).toBe(401);
  });

  test("keys are stored only as hashes", () => {
    const rows = t.deps.db.query("SELECT * FROM credentials").all() as Record<string, unknown>[];
    const dump = JSON.stringify(rows);
    expect(dump).not.toContain(acme.test);
    expect(dump).not.toContain(acme.live);
  });

  test("the hint shows prefix and last four only", async () => {
    const { listApiKeys } = await import("../../src/modules/keys/service");
    const hints = listApiKeys(t.deps.db, "acme").map((k) => k.hint);
    expect(hints).toContain(`sk_test_...${acme.test.slice(-4)}`);
    expect(hints).toContain(`sk_live_...${acme.live.slice(-4)}`);
  });
});

describe("OpenAPI", () => {
  test("/v1/openapi.json is public OpenAPI 3.1 with request schemas from zod", async () => {
    const r = await t.call("GET", "/v1/openapi.json");
    expect(r.status).toBe(200);
    expect(r.body.openapi).toBe("3.1.0");
    const post = r.body.paths["/v1/end-users"].post;
    expect(post.requestBody.content["application/json"].schema.properties.email).toBeDefined();
    expect(r.body.paths["/v1/end-users"].get.parameters.map((p: any) => p.name)).toContain("external_id");
  });

  test("every operation documents the error body and the version header; POSTs the Idempotency-Key", async () => {
    const r = await t.call("GET", "/v1/openapi.json");
    const ops = Object.values(r.body.paths as Record<string, Record<string, any>>).flatMap((item) => Object.entries(item));
    expect(ops.length).toBeGreaterThan(50);
    for (const [method, op] of ops) {
      expect(op.responses["4XX"].$ref).toBe("#/components/responses/Error");
      const refs = op.parameters.map((p: any) => p.$ref).filter(Boolean);
      expect(refs).toContain("#/components/parameters/ParleyVersion");
      if (method === "post") expect(refs).toContain("#/components/parameters/IdempotencyKey");
    }
    expect(r.body.components.schemas.Error.properties.error.required).toEqual(["code", "message"]);
  });

  test("docs/api/openapi.json is the document the code generates (bun scripts/openapi.ts rewrites it)", async () => {
    const r = await t.call("GET", "/v1/openapi.json");
    const committed = await Bun.file(new URL("../../docs/api/openapi.json", import.meta.url)).json();
    expect(committed).toEqual(r.body);
  });
});
