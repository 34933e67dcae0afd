import { describe, expect, test } from "bun:test";
import { makeTenant, makeTestApp } from "../helpers";

describe("rate limits", () => {
  test("X-RateLimit headers on every response, 429 with Retry-After past the per-second limit", async () => {
    const t = await makeTestApp({ env: { PARLEY_RATE_LIMIT_PER_SECOND: "3", PARLEY_RATE_LIMIT_PER_MINUTE: "100" } });
    const acme = makeTenant(t.deps);
    const replies = [];
    for (let i = 0; i < 4; i++) replies.push(await t.call("GET", "/v1/end-users", { key: acme.test }));
    expect(replies.slice(0, 3).map((r) => r.status)).toEqual([200, 200, 200]);
    expect(replies[0]!.headers.get("x-ratelimit-limit")).toBe("100");
    expect(replies[0]!.headers.get("x-ratelimit-remaining")).toBe("99");
    expect(Number(replies[0]!.headers.get("x-ratelimit-reset"))).toBeGreaterThan(t.clock.now().getTime() / 1000);
    const limited = replies[3]!;
    expect(limited.status).toBe(429);
    expect(limited.body.error.code).toBe("rate_limited");
    expect(limited.headers.get("retry-after")).toBe("1");
    // The headers of the 429 describe the per-second window that refused it, as Retry-After does.
    expect(limited.headers.get("x-ratelimit-limit")).toBe("3");
    expect(limited.headers.get("x-ratelimit-remaining")).toBe("0");
    expect(Number(limited.headers.get("x-ratelimit-reset"))).toBe(Math.floor(t.clock.now().getTime() / 1000) + 1);
    // A new second, a new allowance; other keys were never affected.
    const other = makeTenant(t.deps);
    expect((await t.call("GET", "/v1/end-users", { key: other.test })).status).toBe(200);
    t.clock.advance(1000);
    expect((await t.call("GET", "/v1/end-users", { key: acme.test })).status).toBe(200);
  });

  test("the per-minute window holds across seconds and resets at the minute", async () => {
    const t = await makeTestApp({ env: { PARLEY_RATE_LIMIT_PER_SECOND: "0", PARLEY_RATE_LIMIT_PER_MINUTE: "5" } });
    const acme = makeTenant(t.deps);
    t.clock.set(new Date("2026-01-15T12:00:00.000Z"));
    for (let i = 0; i < 5; i++) {
      expect((await t.call("GET", "/v1/end-users", { key: acme.test })).status).toBe(200);
      t.clock.advance(2000);
    }
    const limited = await t.call("GET", "/v1/end-users", { key: acme.test });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get("retry-after"))).toBe(50);
    expect(limited.headers.get("x-ratelimit-limit")).toBe("5");
    expect(limited.headers.get("x-ratelimit-remaining")).toBe("0");
    expect(Number(limited.headers.get("x-ratelimit-reset"))).toBe(Date.parse("2026-01-15T12:01:00.000Z") / 1000);
    t.clock.advance(50_000);
    expect((await t.call("GET", "/v1/end-users", { key: acme.test })).status).toBe(200);
  });

  test("0 turns the limits off", async () => {
    const t = await makeTestApp({ env: { PARLEY_RATE_LIMIT_PER_SECOND: "0", PARLEY_RATE_LIMIT_PER_MINUTE: "0" } });
    const acme = makeTenant(t.deps);
    for (let i = 0; i < 150; i++) expect((await t.call("GET", "/v1/end-users", { key: acme.test })).status).toBe(200);
  });

  test("unauthenticated requests are limited too (by address)", async () => {
    const t = await makeTestApp({ env: { PARLEY_RATE_LIMIT_PER_SECOND: "2" } });
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await t.call("GET", "/v1/end-users", { key: "sk_test_guess" })).status);
    expect(statuses).toEqual([401, 401, 429]);
  });

  test("every response carries the headers: 401, unknown route, malformed JSON, bad version, validation error, the upload target", async () => {
    const t = await makeTestApp();
    const acme = makeTenant(t.deps);
    const replies = [
      await t.call("GET", "/v1/end-users"),
      await t.call("GET", "/v1/no-such-thing", { key: acme.test }),
      await t.call("POST", "/v1/end-users", { key: acme.test, rawBody: "{not json", headers: { "content-type": "application/json" } }),
      await t.call("GET", "/v1/end-users", { key: acme.test, headers: { "parley-version": "yesterday" } }),
      await t.call("GET", "/v1/end-users?limit=0", { key: acme.test }),
      await t.call("PUT", "/v1/uploads/up_unknown", { rawBody: "bytes" }),
      await t.call("GET", "/healthz"),
    ];
    expect(replies.map((r) => r.status)).toEqual([401, 404, 400, 400, 422, 401, 200]);
    for (const r of replies) {
      expect(r.headers.get("x-ratelimit-limit")).toBe("1000");
      expect(Number(r.headers.get("x-ratelimit-remaining"))).toBeLessThan(1000);
      expect(r.headers.get("request-id")).toStartWith("req_");
    }
  });
});

describe("rate limits: the pages' own files", () => {
  test("dashboard and portal files carry the caller's headers without spending its allowance; their /api counts", async () => {
    const t = await makeTestApp({ env: { PARLEY_RATE_LIMIT_PER_SECOND: "3", PARLEY_RATE_LIMIT_PER_MINUTE: "0" } });
    const files = [];
    for (const path of ["/dashboard", "/dashboard/app.js", "/dashboard/app.css", "/dashboard/no-such-file.js", "/me", "/me/sw.js"])
      for (let i = 0; i < 3; i++) files.push(await t.call("GET", path));
    expect(files.map((r) => r.status)).toEqual([...Array(9).fill(200), 404, 404, 404, ...Array(6).fill(200)]);
    for (const r of files) expect(r.headers.get("x-ratelimit-remaining")).toBe("3");
    // The same address's calls of the pages' APIs count as before: the fourth in a second is refused.
    const calls = [];
    for (let i = 0; i < 4; i++) calls.push((await t.call("GET", "/dashboard/api/system")).status);
    expect(calls).toEqual([401, 401, 401, 429]);
    expect((await t.call("GET", "/dashboard/app.js")).headers.get("x-ratelimit-remaining")).toBe("0");
  });
});

describe("rate limits: pre-signed PUTs", () => {
  test("count per upload token, not per address: tokens from one address do not throttle each other; unusable tokens count per address", async () => {
    const t = await makeTestApp({ env: { PARLEY_RATE_LIMIT_PER_SECOND: "2", PARLEY_RATE_LIMIT_PER_MINUTE: "0" } });
    const acme = makeTenant(t.deps);
    const uploadPaths: string[] = [];
    for (let i = 0; i < 4; i++) {
      const rec = (await t.call("POST", "/v1/recordings", { key: acme.test, body: {} })).body;
      const url = (await t.call("POST", `/v1/recordings/${rec.id}/upload-url`, { key: acme.test, body: {} })).body.upload_url;
      uploadPaths.push(new URL(url).pathname);
      t.clock.advance(1000); // the key's own allowance; the PUTs below all fall in one second
    }
    // Four devices behind one NAT (every test request has the same address), in the same second.
    const puts = [];
    for (const path of uploadPaths) puts.push(await t.call("PUT", path, { rawBody: "audio bytes" }));
    expect(puts.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    expect(puts.map((r) => r.headers.get("x-ratelimit-remaining"))).toEqual(["1", "1", "1", "1"]);
    // An unknown token, and a token already spent, count per address: the third is refused.
    const guesses = [];
    for (const path of ["/v1/uploads/up_unknown", uploadPaths[0]!, "/v1/uploads/up_unknown"])
      guesses.push((await t.call("PUT", path, { rawBody: "x" })).status);
    expect(guesses).toEqual([401, 401, 429]);
    // The address is throttled, not the devices: a live token still goes through.
    const rec = (await t.call("POST", "/v1/recordings", { key: acme.test, body: {} })).body;
    const fresh = (await t.call("POST", `/v1/recordings/${rec.id}/upload-url`, { key: acme.test, body: {} })).body.upload_url;
    expect((await t.call("PUT", new URL(fresh).pathname, { rawBody: "audio bytes" })).status).toBe(200);
  });
});
