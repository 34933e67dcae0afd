import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createAdmin } from "../../src/modules/admins/service";
import { makeTestApp } from "../helpers";
import { type OidcTestProvider, startOidcProvider } from "../support/oidc-provider";

const PUBLIC_URL = "https://parley.clinic.example";
const REDIRECT_URI = `${PUBLIC_URL}/dashboard/api/sso/callback`;
const ROLE_MAP = "parley-owners=owner,parley-admins=admin,parley-compliance=compliance,parley-support=viewer";

const USERS = [
  { login: "olga", email: "olga@clinic.example", groups: ["staff", "parley-compliance"] },
  { login: "adam", email: "adam@clinic.example", groups: ["parley-support", "parley-admins"] },
  { login: "nina", email: "nina@clinic.example", groups: ["staff"] },
  { login: "tom", email: "tom@clinic.example", groups: 42 },
  { login: "lena", email: "local@clinic.example", groups: ["parley-owners"] },
  { login: "sam", email: "sam@clinic.example", groups: "parley-support" },
  { login: "ole", email: "ole@clinic.example", groups: ["parley-owners"] },
];

type App = Awaited<ReturnType<typeof makeTestApp>>;

describe("single sign-on with a real OpenID provider", () => {
  let idp: OidcTestProvider;
  let t: App;

  beforeAll(async () => {
    idp = await startOidcProvider(USERS, [REDIRECT_URI]);
    // Rate limits off: one test starts a thousand sign-ins, and the test clock stands still.
    t = await makeTestApp({
      env: { PARLEY_PUBLIC_URL: PUBLIC_URL, PARLEY_RATE_LIMIT_PER_SECOND: "0", PARLEY_RATE_LIMIT_PER_MINUTE: "0", ...idp.env(ROLE_MAP) },
    });
    await createAdmin(t.deps.db, "local@clinic.example", "a local owner password", "owner", t.clock.now());
  });
  afterAll(() => idp?.stop());

  const get = (path: string, cookie = "") => t.app.handle(new Request(`http://localhost${path}`, { headers: cookie ? { cookie } : {} }));

  /** GET /start: the provider's URL and the flow cookie, as a browser would keep it. */
  async function start(): Promise<{ authorizationUrl: string; flowCookie: string }> {
    const r = await get("/dashboard/api/sso/start");
    expect(r.status).toBe(303);
    const flowCookie = r.headers.getSetCookie().find((c) => c.startsWith("parley_sso_flow="))!;
    expect(flowCookie).toContain("HttpOnly");
    return { authorizationUrl: r.headers.get("location")!, flowCookie: flowCookie.split(";")[0]! };
  }

  const callback = (url: URL, flowCookie: string) => get(`/dashboard/api/sso/callback${url.search}`, flowCookie);

  const sessionCookieOf = (r: Response) => r.headers.getSetCookie().find((c) => c.startsWith("parley_session=") && !c.startsWith("parley_session=;"));
  const sessionCount = () => t.deps.db.query<{ n: number }, []>("SELECT count(*) AS n FROM admin_sessions").get()!.n;
  const auditRows = (action: string) =>
    t.deps.db
      .query<{ actor_type: string; actor_id: string | null; resource_ids: string }, [string]>("SELECT * FROM audit_events WHERE action = ? ORDER BY seq")
      .all(action);

  async function signInAs(login: string): Promise<Response> {
    const { authorizationUrl, flowCookie } = await start();
    return callback(await idp.signInAt(authorizationUrl, login), flowCookie);
  }

  /** Expects `attempt` to be refused: the dashboard's refusal page naming `reason`, an audit row, and no session. */
  async function expectRefused(reason: string, attempt: () => Promise<Response>) {
    const before = counts();
    const r = await attempt();
    expect(r.status).toBe(303);
    expect(r.headers.get("location")).toBe(`/dashboard?sso_refused=${reason}`);
    expect(sessionCookieOf(r)).toBeUndefined();
    expect(sessionCount()).toBe(before.sessions);
    expect(auditRows("admin.sign_in.refused").length).toBe(before.refusals + 1);
  }
  const counts = () => ({ sessions: sessionCount(), refusals: auditRows("admin.sign_in.refused").length });

  test("GET /dashboard/api/setup says SSO is on; /start asks for the code flow with PKCE S256, state and nonce", async () => {
    expect(await (await get("/dashboard/api/setup")).json()).toMatchObject({ open: false, sso: true });
    const url = new URL((await start()).authorizationUrl);
    expect(url.origin).toBe(idp.issuer);
    expect(Object.fromEntries(url.searchParams)).toMatchObject({
      response_type: "code",
      client_id: idp.clientId,
      redirect_uri: REDIRECT_URI,
      code_challenge_method: "S256",
    });
    for (const name of ["state", "nonce", "code_challenge"]) expect(url.searchParams.get(name)?.length).toBeGreaterThan(20);
  });

  test("a compliance officer signs in: an account keyed by issuer and subject, the role from the groups, a session, an audit row", async () => {
    const r = await signInAs("olga");
    expect(r.status).toBe(303);
    expect(r.headers.get("location")).toBe("/dashboard");
    const cookie = sessionCookieOf(r)!;
    expect(cookie).toContain("HttpOnly");
    const session = await (await get("/dashboard/api/session", cookie.split(";")[0]!)).json();
    expect(session.admin.email).toBe("olga@clinic.example");
    const admin = t.deps.db.query<{ role: string }, [string]>("SELECT role FROM admins WHERE id = ?").get(session.admin.id)!;
    expect(admin.role).toBe("compliance");
    const identity = t.deps.db.query<{ issuer: string; subject: string }, [string]>("SELECT * FROM admin_identities WHERE admin_id = ?").get(session.admin.id)!;
    expect(identity).toMatchObject({ issuer: idp.issuer, subject: "olga" });
    expect(auditRows("admin.sign_in").at(-1)).toMatchObject({ actor_type: "admin", actor_id: session.admin.id });

    // Signing out is audited too.
    const out = await t.app.handle(
      new Request("http://localhost/dashboard/api/session", {
        method: "DELETE",
        headers: { cookie: cookie.split(";")[0]!, "x-csrf-token": session.csrf_token },
      }),
    );
    expect(out.status).toBe(204);
    expect(auditRows("admin.sign_out").at(-1)).toMatchObject({ actor_type: "admin", actor_id: session.admin.id });
  });

  test("groups only in UserInfo (oidc-provider's way) are read from there; in the ID token (Keycloak's, Entra ID's), UserInfo is not asked", async () => {
    const asked = idp.userinfoRequests;
    expect((await signInAs("adam")).headers.get("location")).toBe("/dashboard");
    expect(idp.userinfoRequests).toBe(asked + 1);

    const keycloakLike = await startOidcProvider(USERS, [REDIRECT_URI], { claimsInIdToken: true });
    try {
      const other = await makeTestApp({ env: { PARLEY_PUBLIC_URL: PUBLIC_URL, ...keycloakLike.env(ROLE_MAP) } });
      const started = await other.app.handle(new Request("http://localhost/dashboard/api/sso/start"));
      const flowCookie = started.headers.getSetCookie()[0]!.split(";")[0]!;
      const back = await keycloakLike.signInAt(started.headers.get("location")!, "olga");
      const r = await other.app.handle(new Request(`http://localhost/dashboard/api/sso/callback${back.search}`, { headers: { cookie: flowCookie } }));
      expect(r.headers.get("location")).toBe("/dashboard");
      expect(other.deps.db.query("SELECT role FROM admins WHERE email = 'olga@clinic.example'").get()).toEqual({ role: "compliance" });
      expect(keycloakLike.userinfoRequests).toBe(0);
    } finally {
      await keycloakLike.stop();
    }
  });

  test("with PARLEY_REQUIRE_MFA=1 an SSO session is not held to enrol a local second factor (the provider's business), a password session is", async () => {
    const strict = await makeTestApp({ env: { PARLEY_PUBLIC_URL: PUBLIC_URL, PARLEY_REQUIRE_MFA: "1", ...idp.env(ROLE_MAP) } });
    const started = await strict.app.handle(new Request("http://localhost/dashboard/api/sso/start"));
    const back = await idp.signInAt(started.headers.get("location")!, "adam");
    const r = await strict.app.handle(
      new Request(`http://localhost/dashboard/api/sso/callback${back.search}`, { headers: { cookie: started.headers.getSetCookie()[0]!.split(";")[0]! } }),
    );
    const cookie = sessionCookieOf(r)!.split(";")[0]!;
    const session = await (await strict.app.handle(new Request("http://localhost/dashboard/api/session", { headers: { cookie } }))).json();
    expect(session.second_factor.must_enrol).toBe(false);

    await createAdmin(strict.deps.db, "pw@clinic.example", "a local owner password", "owner", strict.clock.now());
    const local = await strict.call("POST", "/dashboard/api/session", { body: { email: "pw@clinic.example", password: "a local owner password" } });
    expect(local.body.second_factor.must_enrol).toBe(true);
  });

  test("the provider cannot demote the last owner: refused (last_owner), the account stays owner; an account made by SSO is audited", async () => {
    const solo = await makeTestApp({ env: { PARLEY_PUBLIC_URL: PUBLIC_URL, ...idp.env(ROLE_MAP) } });
    const signIn = async () => {
      const started = await solo.app.handle(new Request("http://localhost/dashboard/api/sso/start"));
      const back = await idp.signInAt(started.headers.get("location")!, "ole");
      const cookie = started.headers.getSetCookie()[0]!.split(";")[0]!;
      return solo.app.handle(new Request(`http://localhost/dashboard/api/sso/callback${back.search}`, { headers: { cookie } }));
    };
    expect((await signIn()).headers.get("location")).toBe("/dashboard");
    const roleOfOle = () => solo.deps.db.query<{ role: string }, []>("SELECT role FROM admins WHERE email = 'ole@clinic.example'").get()!.role;
    expect(roleOfOle()).toBe("owner");
    expect(solo.deps.db.query("SELECT actor_type, actor_id FROM audit_events WHERE action = 'admin.create'").get()).toEqual({
      actor_type: "sso",
      actor_id: "ole",
    });

    USERS[6]!.groups = ["parley-admins"];
    try {
      expect((await signIn()).headers.get("location")).toBe("/dashboard?sso_refused=last_owner");
      expect(roleOfOle()).toBe("owner");
    } finally {
      USERS[6]!.groups = ["parley-owners"];
    }
  });

  test("the highest mapped role wins, a lone group as a string counts, and the role follows the groups at each sign-in", async () => {
    const adam = sessionCookieOf(await signInAs("adam"))!;
    const adamId = (await (await get("/dashboard/api/session", adam.split(";")[0]!)).json()).admin.id;
    const roleOf = (id: string) => t.deps.db.query<{ role: string }, [string]>("SELECT role FROM admins WHERE id = ?").get(id)!.role;
    expect(roleOf(adamId)).toBe("admin");

    const sam = sessionCookieOf(await signInAs("sam"))!;
    const samId = (await (await get("/dashboard/api/session", sam.split(";")[0]!)).json()).admin.id;
    expect(roleOf(samId)).toBe("viewer");

    // The provider moves adam to support only: his next sign-in makes him a viewer, on the same account.
    USERS[1]!.groups = ["parley-support"];
    const again = sessionCookieOf(await signInAs("adam"))!;
    expect((await (await get("/dashboard/api/session", again.split(";")[0]!)).json()).admin.id).toBe(adamId);
    expect(roleOf(adamId)).toBe("viewer");
    USERS[1]!.groups = ["parley-support", "parley-admins"];
  });

  test("groups that map to no role: refused (no_role), no account made", async () => {
    await expectRefused("no_role", () => signInAs("nina"));
    expect(t.deps.db.query("SELECT 1 FROM admins WHERE email = 'nina@clinic.example'").get()).toBeNull();
    expect(auditRows("admin.sign_in.refused").at(-1)).toMatchObject({ actor_type: "sso", actor_id: "nina" });
  });

  test("a role claim of the wrong type: refused (claim_type)", async () => {
    await expectRefused("claim_type", () => signInAs("tom"));
  });

  test("an email that a local account holds is not taken over: refused (account_conflict), the local owner still signs in", async () => {
    await expectRefused("account_conflict", () => signInAs("lena"));
    const local = await t.call("POST", "/dashboard/api/session", { body: { email: "local@clinic.example", password: "a local owner password" } });
    expect(local.status).toBe(200);
  });

  test("a wrong state: refused (rejected), never a session", async () => {
    const { authorizationUrl, flowCookie } = await start();
    const back = await idp.signInAt(authorizationUrl, "olga");
    const forged = new URL(back);
    forged.searchParams.set("state", "not-the-state-we-sent");
    await expectRefused("rejected", () => callback(forged, flowCookie));
    // A refused callback spends its flow too: the genuine answer after it finds nothing.
    await expectRefused("expired", () => callback(back, flowCookie));
  });

  test("a callback without the browser's flow cookie (login CSRF), or replayed: refused (expired)", async () => {
    const { authorizationUrl, flowCookie } = await start();
    const back = await idp.signInAt(authorizationUrl, "olga");
    await expectRefused("expired", () => callback(back, ""));
    expect((await callback(back, flowCookie)).headers.get("location")).toBe("/dashboard");
    // That callback spent the flow: the same callback again finds nothing.
    await expectRefused("expired", () => callback(back, flowCookie));
  });

  test("a replayed code, under a new flow's state: the provider refuses it, and so do we (rejected)", async () => {
    const first = await start();
    const used = await idp.signInAt(first.authorizationUrl, "olga");
    expect((await callback(used, first.flowCookie)).headers.get("location")).toBe("/dashboard");
    const second = await start();
    const replay = new URL(used);
    replay.searchParams.set("state", new URL(second.authorizationUrl).searchParams.get("state")!);
    await expectRefused("rejected", () => callback(replay, second.flowCookie));
  });

  test("an ID token from another issuer, for another audience, or with another nonce: refused (rejected)", async () => {
    const forgeries: ((claims: Record<string, unknown>) => void)[] = [
      (c) => (c.iss = "https://idp.elsewhere.example"),
      (c) => (c.aud = "some-other-app"),
      (c) => (c.nonce = "a-nonce-we-never-sent"),
    ];
    for (const change of forgeries) {
      const { authorizationUrl, flowCookie } = await start();
      const back = await idp.signInAt(authorizationUrl, "olga");
      idp.forgeNextIdToken(change);
      await expectRefused("rejected", () => callback(back, flowCookie));
    }
    // The forging itself is sound: an untouched re-signed token still signs in.
    const { authorizationUrl, flowCookie } = await start();
    const back = await idp.signInAt(authorizationUrl, "olga");
    idp.forgeNextIdToken(() => {});
    expect((await callback(back, flowCookie)).headers.get("location")).toBe("/dashboard");
  });

  test("sign-ins under way are bounded: past 1000 the oldest is pushed out; past 10 minutes one is too old", async () => {
    const oldest = await start();
    const back = await idp.signInAt(oldest.authorizationUrl, "olga");
    for (let i = 0; i < 1000; i++) await start();
    await expectRefused("expired", () => callback(back, oldest.flowCookie));

    const slow = await start();
    const slowBack = await idp.signInAt(slow.authorizationUrl, "olga");
    t.clock.advance(10 * 60_000);
    await expectRefused("expired", () => callback(slowBack, slow.flowCookie));
  });

  test("the person cancels at the provider: refused (cancelled)", async () => {
    const { authorizationUrl, flowCookie } = await start();
    const state = new URL(authorizationUrl).searchParams.get("state")!;
    const back = new URL(`${REDIRECT_URI}?error=access_denied&state=${state}&iss=${encodeURIComponent(idp.issuer)}`);
    await expectRefused("cancelled", () => callback(back, flowCookie));
  });
});

describe("single sign-on when the provider is down, or off", () => {
  test("an unreachable provider: refused (unreachable) with an audit row; password sign-in still works", async () => {
    const t = await makeTestApp({
      env: { PARLEY_OIDC_ISSUER: "http://localhost:9", PARLEY_OIDC_CLIENT_ID: "parley", PARLEY_OIDC_ROLE_MAP: "admins=admin" },
    });
    await createAdmin(t.deps.db, "owner@clinic.example", "an owner's good password", "owner", t.clock.now());
    const r = await t.app.handle(new Request("http://localhost/dashboard/api/sso/start"));
    expect(r.status).toBe(303);
    expect(r.headers.get("location")).toBe("/dashboard?sso_refused=unreachable");
    expect(t.deps.db.query("SELECT count(*) AS n FROM audit_events WHERE action = 'admin.sign_in.refused'").get()).toEqual({ n: 1 });
    expect((await t.call("POST", "/dashboard/api/session", { body: { email: "owner@clinic.example", password: "an owner's good password" } })).status).toBe(
      200,
    );
  });

  test("without PARLEY_OIDC_ISSUER setup says SSO is off, and start and callback are 404 with the spec's body", async () => {
    const t = await makeTestApp();
    expect((await t.call("GET", "/dashboard/api/setup")).body).toMatchObject({ sso: false });
    for (const path of ["/dashboard/api/sso/start", "/dashboard/api/sso/callback?code=x&state=y"]) {
      const r = await t.call("GET", path);
      expect(r.status).toBe(404);
      expect(r.body.error.code).toBe("not_found");
    }
  });
});
