import { beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Glob } from "bun";
import { PORTAL_ASSETS } from "../../src/modules/portal/assets";
import { PORTAL_COOKIE } from "../../src/http/wearer-sessions";
import { operatorActor } from "../../src/modules/audit/service";
import { issueInvite, startWearerSessionByEmail } from "../../src/modules/portal/invites";
import { makeTenant, makeTestApp } from "../helpers";
import { seedRecording, voiced, wav } from "./pipeline-fixtures";

/**
 * The wearer's portal (issue 32 item 5): one-time sign-in links, and a wearer's session that
 * acts on the real /v1 API with exactly the powers of a key confined to that end user.
 */
type T = Awaited<ReturnType<typeof makeTestApp>>;
let t: T;
let acme: ReturnType<typeof makeTenant>;
let wearer: string;
let other: string;
let own: string;
let foreign: string;
const tenant = () => ({ projectId: acme.project.id, mode: "test" as const });

beforeAll(async () => {
  t = await makeTestApp();
  acme = makeTenant(t.deps, "portal-acme");
  wearer = (await t.call("POST", "/v1/end-users", { key: acme.test, body: { name: "Dr. Ana Weber", email: "ana@clinic.example" } })).body.id;
  other = (await t.call("POST", "/v1/end-users", { key: acme.test, body: { name: "Dr. Ben Ito", email: "ben@clinic.example" } })).body.id;
  own = await seedRecording(t.deps, tenant(), wav(voiced(1)), { endUserId: wearer });
  foreign = await seedRecording(t.deps, tenant(), wav(voiced(1)), { endUserId: other });
});

const invite = (endUserId = wearer) => issueInvite(t.deps, tenant(), endUserId, operatorActor(), "https://parley.example");
const tokenOf = (url: string) => url.split("#")[1]!;

/** POST /me/api/invite as the invite page does; the cookie it set, if any. */
async function redeem(token: string) {
  const res = await t.app.handle(
    new Request("http://localhost/me/api/invite", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ token }) }),
  );
  const setCookie = res.headers.get("set-cookie");
  const cookie = setCookie?.startsWith(`${PORTAL_COOKIE}=`) ? setCookie.split(";")[0]! : null;
  return { status: res.status, body: (await res.json()) as any, cookie };
}

/** A signed-in wearer: their cookie and CSRF token. */
async function signedIn(endUserId = wearer) {
  const r = await redeem(tokenOf(invite(endUserId).url));
  expect(r.status).toBe(200);
  return { cookie: r.cookie!, csrf: r.body.csrf_token as string };
}

/** A call as the portal's pages make it: the cookie, the portal's header, and the CSRF token on writes. */
function asWearer(w: { cookie: string; csrf: string }, method: string, path: string, body?: unknown) {
  const headers: Record<string, string> = { cookie: w.cookie, "x-parley-portal": "1" };
  if (method !== "GET") headers["x-csrf-token"] = w.csrf;
  return t.call(method, path, { headers, body });
}

const auditRows = (action: string) =>
  t.deps.db
    .query<{ actor_type: string; resource_ids: string }, [string]>("SELECT actor_type, resource_ids FROM audit_events WHERE action = ? ORDER BY seq")
    .all(action);

describe("sign-in links", () => {
  test("a link is printed once with its token in the fragment, stored only hashed, and expires after PARLEY_INVITE_HOURS", () => {
    const issued = invite();
    expect(issued.url).toMatch(/^https:\/\/parley\.example\/me\/invite#inv_\w{32}$/);
    expect(Date.parse(issued.expires_at) - t.clock.now().getTime()).toBe(72 * 3_600_000);
    const stored = t.deps.db.query<{ token_hash: string }, []>("SELECT token_hash FROM portal_invites").all();
    expect(stored.map((s) => s.token_hash)).not.toContain(tokenOf(issued.url));
    expect(auditRows("portal.invite.create").at(-1)!.resource_ids).toContain(wearer);
  });

  test("a link signs its wearer in once: the second use is refused with a clear message and an audit row, and no session", async () => {
    const token = tokenOf(invite().url);
    const first = await redeem(token);
    expect(first.status).toBe(200);
    expect(first.cookie).toMatch(new RegExp(`^${PORTAL_COOKIE}=wst_`));
    expect(first.body.end_user).toEqual({ id: wearer, name: "Dr. Ana Weber", email: "ana@clinic.example" });
    const refusedBefore = auditRows("portal.sign_in.refused").length;

    const again = await redeem(token);
    expect(again.status).toBe(401);
    expect(again.cookie).toBeNull();
    expect(again.body.error).toMatchObject({ code: "unauthorized", param: "token" });
    expect(again.body.error.message).toContain("already been used");
    expect(auditRows("portal.sign_in.refused").length).toBe(refusedBefore + 1);
    expect(auditRows("portal.sign_in.refused").at(-1)!.actor_type).toBe("anonymous");
  });

  test("an expired link is refused with a clear message and an audit row, and no session", async () => {
    const token = tokenOf(invite().url);
    t.clock.advance(72 * 3_600_000);
    const refusedBefore = auditRows("portal.sign_in.refused").length;
    const r = await redeem(token);
    expect(r.status).toBe(401);
    expect(r.cookie).toBeNull();
    expect(r.body.error.message).toContain("expired");
    expect(auditRows("portal.sign_in.refused").length).toBe(refusedBefore + 1);
  });

  test("an unknown or malformed token is refused, never a 500", async () => {
    const unknown = await redeem("inv_not-a-real-token");
    expect(unknown.status).toBe(401);
    expect(unknown.body.error.message).toContain("not valid");
    for (const body of ["{}", '{"token": ""}', '{"token": 12}', "not json"]) {
      const res = await t.app.handle(new Request("http://localhost/me/api/invite", { method: "POST", headers: { "content-type": "application/json" }, body }));
      expect([400, 422]).toContain(res.status);
      expect(res.headers.get("set-cookie")).toBeNull();
    }
  });

  test("no link for an unknown end user (404) or one of another project (404)", () => {
    expect(() => invite("eu_unknown")).toThrow("No end user eu_unknown.");
    const elsewhere = makeTenant(t.deps, "portal-elsewhere");
    expect(() => issueInvite(t.deps, { projectId: elsewhere.project.id, mode: "test" }, wearer, operatorActor(), "https://x")).toThrow("No end user");
  });
});

describe("a wearer's session", () => {
  test("sees only their own recordings: the other's is 404 as an unknown id, and their audio plays", async () => {
    const w = await signedIn();
    const list = await asWearer(w, "GET", "/v1/recordings");
    expect(list.status).toBe(200);
    expect(list.body.data.map((r: { id: string }) => r.id)).toEqual([own]);
    expect((await asWearer(w, "GET", `/v1/recordings/${foreign}`)).status).toBe(404);
    expect((await asWearer(w, "GET", `/v1/recordings/${own}/audio`)).status).toBe(200);
    // Audited as the wearer, by their end user id, with the session as the credential.
    const read = t.deps.db
      .query<{ actor_type: string; actor_id: string }, []>(
        "SELECT actor_type, actor_id FROM audit_events WHERE action = 'recording.audio.read' ORDER BY seq DESC LIMIT 1",
      )
      .get()!;
    expect(read).toEqual({ actor_type: "wearer", actor_id: wearer });
    expect((await asWearer(w, "GET", `/v1/recordings?end_user_id=${other}`)).status).toBe(403);
    expect((await asWearer(w, "GET", `/v1/end-users/${other}`)).status).toBe(404);
    expect((await asWearer(w, "GET", `/v1/end-users/${wearer}`)).body.name).toBe("Dr. Ana Weber");
  });

  test("reaches nothing an administrator manages: keys, webhooks, devices, configuration writes, the audit log, exports", async () => {
    const w = await signedIn();
    const refused = [
      await asWearer(w, "GET", "/v1/webhooks"),
      await asWearer(w, "POST", "/v1/webhooks", { url: "https://hooks.example/x", events: ["recording.uploaded"] }),
      await asWearer(w, "POST", "/v1/devices", { serial_number: "SN-W1", model: "parley_pin" }),
      await asWearer(w, "GET", "/v1/devices"),
      await asWearer(w, "PUT", "/v1/config/project", { allow_wearer_delete: true }),
      await asWearer(w, "PUT", `/v1/config/end-users/${wearer}`, { allow_wearer_delete: true }),
      await asWearer(w, "GET", "/v1/audit-events"),
      await asWearer(w, "POST", "/v1/exports", { matter: "x", end_user_id: wearer }),
      await asWearer(w, "POST", "/v1/legal-holds", { matter: "x", end_user_id: wearer }),
      await asWearer(w, "POST", "/v1/end-users", { name: "Mallory" }),
    ];
    expect(refused.map((r) => r.status)).toEqual(refused.map(() => 403));
    // Key management is the dashboard's alone: a wearer's cookie is no administrator's session.
    const keys = await t.app.handle(new Request("http://localhost/dashboard/api/keys", { headers: { cookie: w.cookie } }));
    expect(keys.status).toBe(401);
  });

  test("its cookie is its own: not an administrator's session, and an administrator's cookie is no wearer's", async () => {
    const w = await signedIn();
    const asAdminCookie = w.cookie.replace(`${PORTAL_COOKIE}=`, "parley_session=");
    expect((await t.call("GET", "/v1/recordings", { headers: { cookie: asAdminCookie } })).status).toBe(401);
    const admin = await t.app.handle(new Request("http://localhost/dashboard/api/session", { headers: { cookie: asAdminCookie } }));
    expect(admin.status).toBe(401);
  });

  test("a state-changing call without the session's CSRF token is 403", async () => {
    const w = await signedIn();
    const txns = await t.call("PATCH", "/v1/transcriptions/txn_x/speakers", {
      headers: { cookie: w.cookie, "x-parley-portal": "1" },
      body: { SPEAKER_1: { name: "Ana" } },
    });
    expect(txns.status).toBe(403);
    expect(txns.body.error.message).toContain("CSRF");
  });

  test("deleting a recording: refused while allow_wearer_delete is off (the default); allowed when on; a legal hold still wins", async () => {
    const w = await signedIn();
    const mine = await seedRecording(t.deps, tenant(), wav(voiced(1)), { endUserId: wearer });
    const held = await seedRecording(t.deps, tenant(), wav(voiced(1)), { endUserId: wearer });
    expect((await t.call("GET", "/me/api/session", { headers: { cookie: w.cookie } })).body.may_delete).toBe(false);
    const refused = await asWearer(w, "DELETE", `/v1/recordings/${mine}`);
    expect(refused.status).toBe(403);

    expect((await t.call("PUT", `/v1/config/end-users/${wearer}`, { key: acme.test, body: { allow_wearer_delete: true } })).status).toBe(200);
    try {
      expect((await t.call("GET", "/me/api/session", { headers: { cookie: w.cookie } })).body.may_delete).toBe(true);
      expect((await asWearer(w, "DELETE", `/v1/recordings/${mine}`)).status).toBe(204);
      expect((await asWearer(w, "GET", `/v1/recordings/${mine}`)).status).toBe(404);
      expect((await asWearer(w, "DELETE", `/v1/recordings/${foreign}`)).status).toBe(404);

      await t.call("POST", "/v1/legal-holds", { key: acme.test, body: { matter: "Doe v. Clinic", recording_id: held } });
      const onHold = await asWearer(w, "DELETE", `/v1/recordings/${held}`);
      expect(onHold.status).toBe(409);
      expect(onHold.body.error.code).toBe("legal_hold_active");
    } finally {
      await t.call("DELETE", `/v1/config/end-users/${wearer}`, { key: acme.test });
    }
  });

  test("signing out ends it, audited", async () => {
    const w = await signedIn();
    const out = await t.app.handle(new Request("http://localhost/me/api/session", { method: "DELETE", headers: { cookie: w.cookie, "x-csrf-token": w.csrf } }));
    expect(out.status).toBe(204);
    expect(out.headers.get("set-cookie")).toContain("Max-Age=0");
    expect((await asWearer(w, "GET", "/v1/recordings")).status).toBe(401);
    expect((await t.call("GET", "/me/api/session", { headers: { cookie: w.cookie } })).status).toBe(401);
    expect(auditRows("portal.sign_out").length).toBeGreaterThan(0);
  });

  test("deleting the end user ends their sessions and voids their unused links", async () => {
    const gone = (await t.call("POST", "/v1/end-users", { key: acme.test, body: { name: "Leaving" } })).body.id;
    const w = await signedIn(gone);
    const unused = tokenOf(invite(gone).url);
    expect((await t.call("DELETE", `/v1/end-users/${gone}`, { key: acme.test })).status).toBe(204);
    expect((await asWearer(w, "GET", "/v1/recordings")).status).toBe(401);
    expect((await redeem(unused)).status).toBe(401);
    const left = t.deps.db.query<{ n: number }, [string, string]>(
      "SELECT (SELECT count(*) FROM portal_sessions WHERE end_user_id = ?) + (SELECT count(*) FROM portal_invites WHERE end_user_id = ?) AS n",
    );
    expect(left.get(gone, gone)!.n).toBe(0);
  });
});

describe("rate limits", () => {
  test("a wearer's session is its own caller: its requests do not use up the address's anonymous allowance", async () => {
    const limited = await makeTestApp({ env: { PARLEY_RATE_LIMIT_PER_SECOND: "3", PARLEY_RATE_LIMIT_PER_MINUTE: "0" } });
    const p = makeTenant(limited.deps, "portal-limited");
    const eu = (await limited.call("POST", "/v1/end-users", { key: p.test, body: { name: "Ana" } })).body.id;
    const token = tokenOf(issueInvite(limited.deps, { projectId: p.project.id, mode: "test" }, eu, operatorActor(), "https://x").url);
    const signIn = await limited.app.handle(
      new Request("http://localhost/me/api/invite", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ token }) }),
    );
    const cookie = signIn.headers.get("set-cookie")!.split(";")[0]!;
    const asWearerHere = () => limited.app.handle(new Request("http://localhost/v1/recordings", { headers: { cookie, "x-parley-portal": "1" } }));
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await asWearerHere()).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
    // The sign-in was the address's one anonymous request so far: it has room left.
    expect((await limited.app.handle(new Request("http://localhost/me"))).status).toBe(200);
  });
});

describe("the single sign-on hook", () => {
  test("an email naming exactly one live end user starts their session; none is 403", () => {
    const started = startWearerSessionByEmail(t.deps, "ANA@clinic.example", { requestId: null, clientAddress: null });
    expect(started.session.endUserId).toBe(wearer);
    expect(() => startWearerSessionByEmail(t.deps, "nobody@clinic.example", { requestId: null, clientAddress: null })).toThrow("No wearer");
  });
});

describe("the dashboard's invite button", () => {
  test("an administrator's session issues a link on the page's own origin; a wearer's cookie cannot", async () => {
    const { createAdmin } = await import("../../src/modules/admins/service");
    await createAdmin(t.deps.db, "owner@clinic.example", "correct horse battery staple", "owner", t.clock.now());
    const signIn = await t.app.handle(
      new Request("http://localhost/dashboard/api/session", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ email: "owner@clinic.example", password: "correct horse battery staple" }),
      }),
    );
    const cookie = signIn.headers.get("set-cookie")!.split(";")[0]!;
    const { csrf_token } = (await signIn.json()) as { csrf_token: string };
    await t.app.handle(
      new Request("http://localhost/dashboard/api/session/tenant", {
        method: "PUT",
        headers: { cookie, "x-csrf-token": csrf_token, "content-type": "application/json" },
        body: JSON.stringify({ project_id: acme.project.id, mode: "test" }),
      }),
    );
    const issue = (headers: Record<string, string>) =>
      t.app.handle(new Request(`http://localhost/dashboard/api/end-users/${wearer}/invite`, { method: "POST", headers }));
    const res = await issue({ cookie, "x-csrf-token": csrf_token, origin: "http://localhost" });
    expect(res.status).toBe(201);
    const body = (await res.json()) as { url: string; end_user_id: string };
    expect(body.url).toStartWith("http://localhost/me/invite#inv_");
    expect((await redeem(tokenOf(body.url))).status).toBe(200);

    const w = await signedIn();
    expect((await issue({ cookie: w.cookie, "x-csrf-token": w.csrf })).status).toBe(401);
  });
});

describe("the portal's files", () => {
  test("every file under web/me is embedded (src/modules/portal/assets.ts), as it is on disk", () => {
    const dir = join(import.meta.dir, "..", "..", "web", "me");
    const onDisk = [...new Glob("**/*").scanSync(dir)].map((f) => f.replaceAll("\\", "/")).sort();
    expect(Object.keys(PORTAL_ASSETS).sort()).toEqual(onDisk);
    for (const path of onDisk) expect(PORTAL_ASSETS[path]).toBe(readFileSync(join(dir, path), "utf8"));
  });

  test("/me, /me/invite and the manifest are served with the dashboard's security headers", async () => {
    for (const [path, type] of [
      ["/me", "text/html"],
      ["/me/invite", "text/html"],
      ["/me/sw.js", "text/javascript"],
      ["/me/manifest.webmanifest", "application/manifest+json"],
    ]) {
      const res = await t.app.handle(new Request(`http://localhost${path}`));
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toStartWith(type!);
      expect(res.headers.get("content-security-policy")).toContain("default-src 'self'");
    }
    expect((await t.app.handle(new Request("http://localhost/me/constructor"))).status).toBe(404);
  });

  test("the manifest makes an installable app of /me, and its icons are served", async () => {
    const manifest = (await (await t.app.handle(new Request("http://localhost/me/manifest.webmanifest"))).json()) as {
      start_url: string;
      scope: string;
      display: string;
      icons: { src: string; purpose: string }[];
    };
    expect(manifest).toMatchObject({ start_url: "/me", scope: "/me", display: "standalone" });
    expect(manifest.icons.map((i) => i.purpose).sort()).toEqual(["any", "maskable"]);
    for (const icon of manifest.icons) {
      const res = await t.app.handle(new Request(`http://localhost${icon.src}`));
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("image/svg+xml");
    }
    // The worker may control /me itself, outside its own folder.
    expect((await t.app.handle(new Request("http://localhost/me/sw.js"))).headers.get("service-worker-allowed")).toBe("/me");
  });
});
