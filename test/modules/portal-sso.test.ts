import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { PORTAL_COOKIE } from "../../src/http/wearer-sessions";
import { makeTenant, makeTestApp } from "../helpers";
import { type OidcTestProvider, startOidcProvider } from "../support/oidc-provider";
import { seedRecording, voiced, wav } from "./pipeline-fixtures";

/**
 * Single sign-on into the wearer's portal (issue 32 item 5, decision 170) against a real
 * OpenID provider: the email claim names one live end user, who gets a portal session and
 * sees only their own; anything else is a refusal page, an audit row, and no session.
 */
const PUBLIC_URL = "https://parley.clinic.example";
const REDIRECT_URI = `${PUBLIC_URL}/me/api/sso/callback`;

const USERS = [
  // The provider's address in other letters than the end user's: matched case-insensitively.
  { login: "ana", email: "ANA@clinic.example", emailVerified: true },
  { login: "ben", email: "ben@clinic.example" },
  { login: "stranger", email: "stranger@clinic.example", emailVerified: true },
  { login: "unverified", email: "ana@clinic.example", emailVerified: false },
  { login: "noemail" },
];

type App = Awaited<ReturnType<typeof makeTestApp>>;

describe("single sign-on into the wearer's portal with a real OpenID provider", () => {
  let idp: OidcTestProvider;
  let t: App;
  let ana: string;
  let own: string;
  let foreign: string;

  beforeAll(async () => {
    idp = await startOidcProvider(USERS, [REDIRECT_URI]);
    t = await makeTestApp({ env: { PARLEY_PUBLIC_URL: PUBLIC_URL, ...idp.env("parley-admins=admin") } });
    const acme = makeTenant(t.deps, "portal-sso");
    const tenant = { projectId: acme.project.id, mode: "test" as const };
    ana = (await t.call("POST", "/v1/end-users", { key: acme.test, body: { name: "Dr. Ana Weber", email: "ana@clinic.example" } })).body.id;
    const ben = (await t.call("POST", "/v1/end-users", { key: acme.test, body: { name: "Dr. Ben Ito", email: "ben@clinic.example" } })).body.id;
    own = await seedRecording(t.deps, tenant, wav(voiced(1)), { endUserId: ana });
    foreign = await seedRecording(t.deps, tenant, wav(voiced(1)), { endUserId: ben });
  });
  afterAll(() => idp?.stop());

  const get = (path: string, cookie = "") => t.app.handle(new Request(`http://localhost${path}`, { headers: cookie ? { cookie } : {} }));

  async function start(): Promise<{ authorizationUrl: string; flowCookie: string }> {
    const r = await get("/me/api/sso/start");
    expect(r.status).toBe(303);
    const set = r.headers.getSetCookie().find((c) => c.startsWith("parley_portal_sso_flow="))!;
    expect(set).toContain("Path=/me/api/sso");
    expect(set).toContain("HttpOnly");
    return { authorizationUrl: r.headers.get("location")!, flowCookie: set.split(";")[0]! };
  }

  const callback = (url: URL | string, flowCookie: string) => get(`/me/api/sso/callback${typeof url === "string" ? url : url.search}`, flowCookie);

  async function signInAs(login: string): Promise<Response> {
    const { authorizationUrl, flowCookie } = await start();
    return callback(await idp.signInAt(authorizationUrl, login), flowCookie);
  }

  const portalCookieOf = (r: Response) => r.headers.getSetCookie().find((c) => c.startsWith(`${PORTAL_COOKIE}=`) && !c.startsWith(`${PORTAL_COOKIE}=;`));
  const count = (sql: string) => t.deps.db.query<{ n: number }, []>(sql).get()!.n;
  const counts = () => ({
    portal: count("SELECT count(*) AS n FROM portal_sessions"),
    admin: count("SELECT count(*) AS n FROM admin_sessions"),
    refusals: count("SELECT count(*) AS n FROM audit_events WHERE action = 'portal.sign_in.refused'"),
  });

  /** `attempt` refused: the portal's refusal page naming `reason`, one audit row, no session of either kind. */
  async function expectRefused(reason: string, attempt: () => Promise<Response>) {
    const before = counts();
    const r = await attempt();
    expect(r.status).toBe(303);
    expect(r.headers.get("location")).toBe(`/me?sso_refused=${reason}`);
    expect(portalCookieOf(r)).toBeUndefined();
    expect(counts()).toEqual({ ...before, refusals: before.refusals + 1 });
  }

  test("GET /me/api/sso says it is on; /start sends the browser to the provider with the portal's redirect URI, PKCE, state and nonce", async () => {
    expect(await (await get("/me/api/sso")).json()).toEqual({ enabled: true });
    const url = new URL((await start()).authorizationUrl);
    expect(url.origin).toBe(idp.issuer);
    expect(Object.fromEntries(url.searchParams)).toMatchObject({ response_type: "code", redirect_uri: REDIRECT_URI, code_challenge_method: "S256" });
    expect(url.searchParams.get("state")).toBeTruthy();
    expect(url.searchParams.get("nonce")).toBeTruthy();
  });

  test("a wearer whose email names a live end user gets a portal session (not an admin one) and sees only their own", async () => {
    const before = counts();
    const r = await signInAs("ana");
    expect(r.status).toBe(303);
    expect(r.headers.get("location")).toBe("/me#/");
    expect(r.headers.getSetCookie().some((c) => c.startsWith("parley_session="))).toBe(false);
    const cookie = portalCookieOf(r)!.split(";")[0]!;
    expect(counts()).toMatchObject({ portal: before.portal + 1, admin: before.admin });

    const session = await t.call("GET", "/me/api/session", { headers: { cookie, "x-parley-portal": "1" } });
    expect(session.status).toBe(200);
    expect(session.body.end_user).toMatchObject({ id: ana, email: "ana@clinic.example" });
    const list = await t.call("GET", "/v1/recordings", { headers: { cookie, "x-parley-portal": "1" } });
    expect(list.status).toBe(200);
    const ids = list.body.data.map((x: { id: string }) => x.id);
    expect(ids).toContain(own);
    expect(ids).not.toContain(foreign);
    expect((await t.call("GET", `/v1/recordings/${foreign}`, { headers: { cookie, "x-parley-portal": "1" } })).status).toBe(404);

    const row = t.deps.db
      .query<{ actor_type: string; actor_id: string; resource_ids: string }, []>(
        "SELECT * FROM audit_events WHERE action = 'portal.sign_in' ORDER BY seq DESC LIMIT 1",
      )
      .get()!;
    expect(row).toMatchObject({ actor_type: "wearer", actor_id: ana });
  });

  test("an email that names no end user is refused", async () => {
    await expectRefused("no_wearer", () => signInAs("stranger"));
  });

  test("an email the provider calls unverified is refused, though it names an end user", async () => {
    await expectRefused("unverified_email", () => signInAs("unverified"));
  });

  test("a provider that sends no email is refused", async () => {
    await expectRefused("no_email", () => signInAs("noemail"));
  });

  test("a replayed callback is refused: the flow is spent by its first use", async () => {
    const { authorizationUrl, flowCookie } = await start();
    const back = await idp.signInAt(authorizationUrl, "ben");
    expect(portalCookieOf(await callback(back, flowCookie))).toBeDefined();
    await expectRefused("expired", () => callback(back, flowCookie));
  });

  test("a callback without the browser's flow cookie, or with the dashboard's, is refused (login CSRF)", async () => {
    const { authorizationUrl, flowCookie } = await start();
    const back = await idp.signInAt(authorizationUrl, "ana");
    await expectRefused("expired", () => callback(back, ""));
    await expectRefused("expired", () => callback(back, flowCookie.replace("parley_portal_sso_flow", "parley_sso_flow")));
  });

  test("a wrong state is refused", async () => {
    const { authorizationUrl, flowCookie } = await start();
    const back = await idp.signInAt(authorizationUrl, "ana");
    back.searchParams.set("state", "not-the-state-we-sent");
    await expectRefused("rejected", () => callback(back, flowCookie));
  });

  test.each([
    ["another issuer", (c: Record<string, unknown>) => (c.iss = "https://evil.example")],
    ["another audience", (c: Record<string, unknown>) => (c.aud = "someone-else")],
    ["another nonce", (c: Record<string, unknown>) => (c.nonce = "not-the-nonce")],
  ])("an ID token with %s is refused", async (_, change) => {
    const { authorizationUrl, flowCookie } = await start();
    const back = await idp.signInAt(authorizationUrl, "ana");
    idp.forgeNextIdToken(change);
    await expectRefused("rejected", () => callback(back, flowCookie));
  });

  test("the provider's own refusal (the person cancelled) is a refusal page, not an error", async () => {
    const { flowCookie, authorizationUrl } = await start();
    const state = new URL(authorizationUrl).searchParams.get("state")!;
    await expectRefused("cancelled", () => callback(`?error=access_denied&state=${state}&iss=${encodeURIComponent(idp.issuer)}`, flowCookie));
  });
});

describe("portal single sign-on, off", () => {
  test("without PARLEY_OIDC_ISSUER the page offers none and the routes answer the spec's 404", async () => {
    const t = await makeTestApp();
    expect((await t.call("GET", "/me/api/sso")).body).toEqual({ enabled: false });
    for (const path of ["/me/api/sso/start", "/me/api/sso/callback?code=x&state=y"]) {
      const r = await t.call("GET", path);
      expect(r.status).toBe(404);
      expect(r.body.error.code).toBe("not_found");
    }
  });
});
