import { describe, expect, test } from "bun:test";
import { Elysia } from "elysia";
import { authentication } from "../../src/http/auth";
import { sha256Hex } from "../../src/crypto";
import { createAdmin, resetAdminPassword, removeAdmin } from "../../src/modules/admins/service";
import { makeTenant, makeTestApp } from "../helpers";

const PASSWORD = "correct horse battery staple";
type T = Awaited<ReturnType<typeof makeTestApp>>;

/** A request to the app with a session's cookie (and its CSRF token on writes). */
function send(t: T, method: string, path: string, opts: { cookie?: string; csrf?: string; body?: unknown; headers?: Record<string, string> } = {}) {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.cookie) headers.cookie = opts.cookie;
  if (opts.csrf) headers["x-csrf-token"] = opts.csrf;
  if (opts.body !== undefined) headers["content-type"] = "application/json";
  return t.app.handle(new Request(`http://localhost${path}`, { method, headers, body: opts.body === undefined ? undefined : JSON.stringify(opts.body) }));
}

async function signIn(t: T, email = "admin@clinic.example", password = PASSWORD) {
  const res = await send(t, "POST", "/dashboard/api/session", { body: { email, password } });
  expect(res.status).toBe(200);
  const setCookie = res.headers.get("set-cookie")!;
  const body = await res.json();
  return { cookie: setCookie.split(";")[0]!, setCookie, csrf: body.csrf_token as string, body };
}

async function appWithAdmin(env: Record<string, string> = {}) {
  const t = await makeTestApp({ env });
  const acme = makeTenant(t.deps, "acme");
  await createAdmin(t.deps.db, "admin@clinic.example", PASSWORD, "owner", t.clock.now());
  return { t, acme };
}

describe("dashboard sessions", () => {
  test("the cookie is HttpOnly and SameSite=Strict, Secure over HTTPS only; the database keeps only the token's hash", async () => {
    const { t } = await appWithAdmin();
    const { setCookie, cookie } = await signIn(t);
    expect(setCookie).toContain("HttpOnly");
    expect(setCookie).toContain("SameSite=Strict");
    expect(setCookie).not.toContain("Secure");
    const token = cookie.split("=")[1]!;
    const stored = t.deps.db.query<{ token_hash: string }, []>("SELECT token_hash FROM admin_sessions").all();
    expect(stored).toEqual([{ token_hash: sha256Hex(token) }]);
    expect(JSON.stringify(t.deps.db.query("SELECT * FROM admin_sessions").all())).not.toContain(token);

    const overTls = await send(t, "POST", "/dashboard/api/session", {
      body: { email: "admin@clinic.example", password: PASSWORD },
      headers: { "x-forwarded-proto": "https" },
    });
    expect(overTls.headers.get("set-cookie")).toContain("; Secure");
  });

  test("a session has a secret key's powers in its project and mode, and no more", async () => {
    const { t, acme } = await appWithAdmin();
    const other = makeTenant(t.deps, "other");
    const theirs = await t.call("POST", "/v1/end-users", { key: other.test, body: { name: "Not yours" } });
    const { cookie, csrf, body } = await signIn(t);
    expect(body.tenant).toEqual({ project_id: acme.project.id, project_name: "acme", mode: "test" });

    const created = await send(t, "POST", "/v1/end-users", { cookie, csrf, body: { name: "Ada" } });
    expect(created.status).toBe(201);
    const ada = await created.json();
    expect((await t.call("GET", `/v1/end-users/${ada.id}`, { key: acme.test })).status).toBe(200);
    expect((await t.call("GET", `/v1/end-users/${ada.id}`, { key: acme.live })).status).toBe(404);
    expect((await send(t, "GET", `/v1/end-users/${theirs.body.id}`, { cookie })).status).toBe(404);

    // Switching the project and mode moves the session, not its powers.
    const switched = await send(t, "PUT", "/dashboard/api/session/tenant", { cookie, csrf, body: { project_id: other.project.id, mode: "test" } });
    expect(switched.status).toBe(200);
    expect((await send(t, "GET", `/v1/end-users/${theirs.body.id}`, { cookie })).status).toBe(200);
    expect((await send(t, "GET", `/v1/end-users/${ada.id}`, { cookie })).status).toBe(404);
    expect((await send(t, "PUT", "/dashboard/api/session/tenant", { cookie, csrf, body: { project_id: "proj_nope", mode: "test" } })).status).toBe(404);
  });

  test("the session's Principal names the administrator, for attribution; a key's names none", async () => {
    const { t, acme } = await appWithAdmin();
    const { cookie } = await signIn(t);
    const probe = new Elysia()
      .use(authentication(t.deps))
      .get("/who", ({ principal }) => ({ kind: principal.kind, scopes: principal.scopes, admin: principal.adminEmail ?? null, project: principal.projectId }));
    const asSession = await probe.handle(new Request("http://localhost/who", { headers: { cookie } })).then((r) => r.json());
    expect(asSession).toEqual({ kind: "secret", scopes: null, admin: "admin@clinic.example", project: acme.project.id });
    const asKey = await probe.handle(new Request("http://localhost/who", { headers: { authorization: `Bearer ${acme.test}` } })).then((r) => r.json());
    expect(asKey.admin).toBeNull();
  });

  test("a key sent with a session cookie acts as the key: a restricted key gains nothing from the cookie", async () => {
    const { t, acme } = await appWithAdmin();
    const { cookie, csrf } = await signIn(t);
    const readOnly = acme.key("test", { scopes: ["end_users:read"] });
    const res = await send(t, "POST", "/v1/end-users", { cookie, csrf, body: { name: "x" }, headers: { authorization: `Bearer ${readOnly}` } });
    expect(res.status).toBe(403);
    const bad = await send(t, "GET", "/v1/end-users", { cookie, headers: { authorization: "Bearer sk_test_unknown" } });
    expect(bad.status).toBe(401);
  });

  test("keys are managed with a session only: an API key is refused there, and a key of another tenant is not found", async () => {
    const { t, acme } = await appWithAdmin();
    expect((await t.call("GET", "/dashboard/api/keys", { key: acme.test })).status).toBe(401);
    expect((await t.call("POST", "/dashboard/api/keys", { key: acme.test, body: { kind: "secret" } })).status).toBe(401);
    const { cookie, csrf } = await signIn(t);
    expect((await send(t, "POST", "/dashboard/api/keys", { cookie, body: { kind: "secret" } })).status).toBe(403);
    const noScopes = await send(t, "POST", "/dashboard/api/keys", { cookie, csrf, body: { kind: "restricted", scopes: [] } });
    expect(noScopes.status).toBe(422);
    expect((await noScopes.json()).error.param).toBe("scopes");
    const liveKeyId = t.deps.db.query<{ id: string }, [string]>("SELECT id FROM credentials WHERE project_id = ? AND mode = 'live'").get(acme.project.id)!.id;
    expect((await send(t, "DELETE", `/dashboard/api/keys/${liveKeyId}`, { cookie, csrf })).status).toBe(404);
    expect((await t.call("GET", "/v1/end-users", { key: acme.live })).status).toBe(200);
  });

  test("idle and absolute timeouts end a session; so do sign-out, a password reset and removal", async () => {
    const { t } = await appWithAdmin({ PARLEY_SESSION_IDLE_MINUTES: "30", PARLEY_SESSION_MAX_HOURS: "2" });
    const idle = await signIn(t);
    t.clock.advance(29 * 60_000);
    expect((await send(t, "GET", "/v1/end-users", { cookie: idle.cookie })).status).toBe(200);
    t.clock.advance(29 * 60_000); // 58 minutes since sign-in, 29 since the last request
    expect((await send(t, "GET", "/v1/end-users", { cookie: idle.cookie })).status).toBe(200);
    t.clock.advance(31 * 60_000);
    const expired = await send(t, "GET", "/v1/end-users", { cookie: idle.cookie });
    expect(expired.status).toBe(401);
    expect((await expired.json()).error.message).toContain("sign in again");

    const busy = await signIn(t);
    for (let i = 0; i < 4; i++) {
      t.clock.advance(25 * 60_000);
      expect((await send(t, "GET", "/dashboard/api/session", { cookie: busy.cookie })).status).toBe(200);
    }
    t.clock.advance(25 * 60_000); // 125 minutes: past the 2 hours whatever the activity
    expect((await send(t, "GET", "/dashboard/api/session", { cookie: busy.cookie })).status).toBe(401);

    const out = await signIn(t);
    expect((await send(t, "DELETE", "/dashboard/api/session", { cookie: out.cookie })).status).toBe(403);
    const signedOut = await send(t, "DELETE", "/dashboard/api/session", { cookie: out.cookie, csrf: out.csrf });
    expect(signedOut.status).toBe(204);
    expect(signedOut.headers.get("set-cookie")).toContain("Max-Age=0");
    expect((await send(t, "GET", "/v1/end-users", { cookie: out.cookie })).status).toBe(401);

    const reset = await signIn(t);
    await resetAdminPassword(t.deps.db, "admin@clinic.example", "a brand new password", t.clock.now());
    expect((await send(t, "GET", "/v1/end-users", { cookie: reset.cookie })).status).toBe(401);
    const removed = await signIn(t, "admin@clinic.example", "a brand new password");
    removeAdmin(t.deps.db, { email: "ADMIN@clinic.example" }, t.clock.now());
    expect((await send(t, "GET", "/v1/end-users", { cookie: removed.cookie })).status).toBe(401);
  });

  test("sign-in: a wrong pair and an unknown email get the same answer; an address making many failures is locked out too", async () => {
    const { t } = await appWithAdmin({ PARLEY_LOGIN_MAX_FAILURES: "2" });
    const wrong = await send(t, "POST", "/dashboard/api/session", { body: { email: "admin@clinic.example", password: "nope" } });
    const unknown = await send(t, "POST", "/dashboard/api/session", { body: { email: "who@clinic.example", password: "nope" } });
    expect([wrong.status, unknown.status]).toEqual([401, 401]);
    expect((await wrong.json()).error.message).toBe((await unknown.json()).error.message);
    // 2 per email, 8 per address: six more failures on other emails lock the address for everyone.
    for (let i = 0; i < 6; i++) await send(t, "POST", "/dashboard/api/session", { body: { email: `guess${i}@clinic.example`, password: "nope" } });
    const locked = await send(t, "POST", "/dashboard/api/session", { body: { email: "admin@clinic.example", password: PASSWORD } });
    expect(locked.status).toBe(429);
    expect(Number(locked.headers.get("retry-after"))).toBeGreaterThan(0);
    t.clock.advance(15 * 60_000);
    expect((await send(t, "POST", "/dashboard/api/session", { body: { email: "admin@clinic.example", password: PASSWORD } })).status).toBe(200);
  });

  test("guesses sent in parallel are counted before their passwords are checked", async () => {
    const { t } = await appWithAdmin({ PARLEY_LOGIN_MAX_FAILURES: "2" });
    const guesses = await Promise.all(
      Array.from({ length: 8 }, (_, i) => send(t, "POST", "/dashboard/api/session", { body: { email: "admin@clinic.example", password: `guess ${i}` } })),
    );
    const statuses = guesses.map((r) => r.status).sort();
    expect(statuses).toEqual([401, 401, 429, 429, 429, 429, 429, 429]);
  });

  test("a sign-in posted from another site is refused", async () => {
    const { t } = await appWithAdmin();
    const res = await send(t, "POST", "/dashboard/api/session", {
      body: { email: "admin@clinic.example", password: PASSWORD },
      headers: { origin: "https://evil.example" },
    });
    expect(res.status).toBe(403);
    expect(res.headers.get("set-cookie")).toBeNull();
    // A sandboxed frame's opaque origin too.
    expect(
      (await send(t, "POST", "/dashboard/api/session", { body: { email: "admin@clinic.example", password: PASSWORD }, headers: { origin: "null" } })).status,
    ).toBe(403);
    // The dashboard's own page sends its own origin.
    expect(
      (
        await send(t, "POST", "/dashboard/api/session", {
          body: { email: "admin@clinic.example", password: PASSWORD },
          headers: { origin: "http://localhost" },
        })
      ).status,
    ).toBe(200);
  });
});

describe("first-run setup", () => {
  test("away from the box it needs the printed setup token, which works once", async () => {
    const t = await makeTestApp();
    expect(await (await send(t, "GET", "/dashboard/api/setup")).json()).toEqual({ open: true, from_loopback: false, sso: false });
    const printed = t.deps.dashboardSessions.setupTokenToPrint()!;
    expect(printed).toMatch(/^setup_/);
    const body = { email: "first@clinic.example", password: "the first good password" };
    const without = await send(t, "POST", "/dashboard/api/setup", { body });
    expect(without.status).toBe(403);
    expect((await without.json()).error.param).toBe("token");
    expect((await send(t, "POST", "/dashboard/api/setup", { body: { ...body, token: "setup_wrong" } })).status).toBe(403);
    const done = await send(t, "POST", "/dashboard/api/setup", { body: { ...body, token: printed } });
    expect(done.status).toBe(201);
    expect(done.headers.get("set-cookie")).toContain("parley_session=");
    expect((await done.json()).tenant).toBeNull();
    expect(await (await send(t, "GET", "/dashboard/api/setup")).json()).toMatchObject({ open: false });
    expect((await send(t, "POST", "/dashboard/api/setup", { body: { ...body, email: "second@clinic.example", token: printed } })).status).toBe(409);
    expect(t.deps.dashboardSessions.setupTokenToPrint()).toBeNull();
  });

  test("from the box itself no token is needed, unless a proxy relayed the request", async () => {
    const t = await makeTestApp();
    const server = t.app.listen({ port: 0, hostname: "127.0.0.1" });
    try {
      const base = `http://127.0.0.1:${server.server!.port}`;
      const post = (headers: Record<string, string> = {}) =>
        fetch(`${base}/dashboard/api/setup`, {
          method: "POST",
          headers: { "content-type": "application/json", ...headers },
          body: JSON.stringify({ email: "first@clinic.example", password: "the first good password" }),
        });
      expect((await post({ "x-forwarded-for": "203.0.113.9" })).status).toBe(403);
      expect((await post({ forwarded: "for=203.0.113.9" })).status).toBe(403);
      expect(await (await fetch(`${base}/dashboard/api/setup`)).json()).toEqual({ open: true, from_loopback: true, sso: false });
      expect((await post()).status).toBe(201);
    } finally {
      server.stop(true);
    }
  });
});
