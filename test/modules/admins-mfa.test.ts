import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { Secret, TOTP } from "otpauth";
import { createAdmin } from "../../src/modules/admins/service";
import { makeTenant, makeTestApp } from "../helpers";

const EMAIL = "admin@clinic.example";
const PASSWORD = "correct horse battery staple";
type T = Awaited<ReturnType<typeof makeTestApp>>;

/** A request to the app with a session's cookie (and its CSRF token on writes). */
async function send(t: T, method: string, path: string, opts: { cookie?: string; csrf?: string; body?: unknown } = {}) {
  const headers: Record<string, string> = {};
  if (opts.cookie) headers.cookie = opts.cookie;
  if (opts.csrf) headers["x-csrf-token"] = opts.csrf;
  if (opts.body !== undefined) headers["content-type"] = "application/json";
  const res = await t.app.handle(
    new Request(`http://localhost${path}`, { method, headers, body: opts.body === undefined ? undefined : JSON.stringify(opts.body) }),
  );
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null };
}

type Session = { cookie: string; csrf: string; body: any };

function sessionOf(reply: { headers: Headers; body: any }): Session {
  const cookie = reply.headers.get("set-cookie")?.split(";")[0];
  if (!cookie) throw new Error(`no session cookie in ${JSON.stringify(reply.body)}`);
  return { cookie, csrf: reply.body.csrf_token, body: reply.body };
}

const passwordStep = (t: T, password = PASSWORD) => send(t, "POST", "/dashboard/api/session", { body: { email: EMAIL, password } });
const codeStep = (t: T, challenge: string, code: string) => send(t, "POST", "/dashboard/api/session/second-factor", { body: { challenge, code } });

/** The code an authenticator app shows now (by the app's clock) for `secret`. */
const codeNow = (t: T, secret: string) =>
  new TOTP({ secret: Secret.fromBase32(secret), algorithm: "SHA1", digits: 6, period: 30 }).generate({ timestamp: t.clock.now().getTime() });

async function appWithAdmin(env: Record<string, string> = {}) {
  const t = await makeTestApp({ env });
  makeTenant(t.deps, "acme");
  await createAdmin(t.deps.db, EMAIL, PASSWORD, "owner", t.clock.now());
  return t;
}

/** Enrols the signed-in administrator: returns the secret and the recovery codes. */
async function enrol(t: T, s: Session) {
  const started = await send(t, "POST", "/dashboard/api/account/second-factor/enrolment", { cookie: s.cookie, csrf: s.csrf });
  expect(started.status).toBe(200);
  const confirmed = await send(t, "POST", "/dashboard/api/account/second-factor/confirmation", {
    cookie: s.cookie,
    csrf: s.csrf,
    body: { code: codeNow(t, started.body.secret) },
  });
  expect(confirmed.status).toBe(200);
  return { secret: started.body.secret as string, recoveryCodes: confirmed.body.recovery_codes as string[], started: started.body };
}

async function signInWithPassword(t: T): Promise<Session> {
  const res = await passwordStep(t);
  expect(res.status).toBe(200);
  return sessionOf(res);
}

const auditActions = (t: T) =>
  t.deps.db
    .query<{ action: string; actor_type: string; resource_ids: string }, []>("SELECT action, actor_type, resource_ids FROM audit_events ORDER BY seq")
    .all();

describe("second factor (TOTP)", () => {
  test("enrolment shows the secret once (text, otpauth URI, QR), is confirmed with a code, and keeps it only sealed", async () => {
    const t = await appWithAdmin();
    const s = await signInWithPassword(t);
    expect(s.body.second_factor).toEqual({ enrolled: false, must_enrol: false });

    const started = await send(t, "POST", "/dashboard/api/account/second-factor/enrolment", { cookie: s.cookie, csrf: s.csrf });
    expect(started.status).toBe(200);
    const { secret, otpauth_uri, qr_code } = started.body;
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(otpauth_uri).toStartWith("otpauth://totp/Parley:admin%40clinic.example?");
    expect(otpauth_uri).toContain(`secret=${secret}`);
    expect(qr_code).toStartWith("data:image/png;base64,");
    expect(JSON.stringify(t.deps.db.query("SELECT * FROM admin_second_factors").all())).not.toContain(secret);

    // Not yet confirmed: the password alone still signs in.
    expect((await passwordStep(t)).headers.get("set-cookie")).toContain("parley_session=");
    const wrong = await send(t, "POST", "/dashboard/api/account/second-factor/confirmation", { cookie: s.cookie, csrf: s.csrf, body: { code: "000000" } });
    expect(wrong.status).toBe(422);
    expect(wrong.body.error.param).toBe("code");

    const confirmed = await send(t, "POST", "/dashboard/api/account/second-factor/confirmation", {
      cookie: s.cookie,
      csrf: s.csrf,
      body: { code: codeNow(t, secret) },
    });
    expect(confirmed.status).toBe(200);
    const codes: string[] = confirmed.body.recovery_codes;
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    for (const code of codes) expect(code).toMatch(/^[a-z2-9]{4}-[a-z2-9]{4}-[a-z2-9]{4}$/);
    const stored = JSON.stringify(t.deps.db.query("SELECT * FROM admin_recovery_codes").all());
    for (const code of codes) expect(stored).not.toContain(code);

    // Never shown again: the state says enrolled, and a new enrolment is refused while this one stands.
    const state = await send(t, "GET", "/dashboard/api/account/second-factor", { cookie: s.cookie });
    expect(state.body).toEqual({ enrolled: true, recovery_codes_left: 10, required: false });
    expect(JSON.stringify(state.body)).not.toContain(secret);
    expect((await send(t, "POST", "/dashboard/api/account/second-factor/enrolment", { cookie: s.cookie, csrf: s.csrf })).status).toBe(409);
    expect(auditActions(t).map((a) => a.action)).toContain("second_factor.enrol");
  });

  test("sign-in is password then code; the same code is refused a second time, the next step's code works", async () => {
    const t = await appWithAdmin();
    const { secret } = await enrol(t, await signInWithPassword(t));
    t.clock.advance(60_000);

    const first = await passwordStep(t);
    expect(first.status).toBe(200);
    expect(first.headers.get("set-cookie")).toBeNull();
    expect(first.body).toEqual({ second_factor_required: true, challenge: expect.stringMatching(/^mfc_/) });
    const code = codeNow(t, secret);
    const signedIn = await codeStep(t, first.body.challenge, code);
    expect(signedIn.status).toBe(200);
    const s = sessionOf(signedIn);
    expect(s.body.second_factor).toEqual({ enrolled: true, must_enrol: false });
    expect((await send(t, "GET", "/v1/end-users", { cookie: s.cookie })).status).toBe(200);

    // A spent challenge is gone; a new sign-in with the same code (same 30 s step) is refused.
    expect((await codeStep(t, first.body.challenge, code)).status).toBe(401);
    const again = await passwordStep(t);
    const replay = await codeStep(t, again.body.challenge, code);
    expect(replay.status).toBe(401);
    expect(replay.body.error.param).toBe("code");
    expect(replay.headers.get("set-cookie")).toBeNull();
    t.clock.advance(30_000);
    expect((await codeStep(t, again.body.challenge, codeNow(t, secret))).status).toBe(200);
  });

  test("a challenge expires after five minutes, and stands for nothing but its second step", async () => {
    const t = await appWithAdmin();
    const { secret } = await enrol(t, await signInWithPassword(t));
    t.clock.advance(60_000);
    const { body } = await passwordStep(t);
    expect((await send(t, "GET", "/v1/end-users", { cookie: `parley_session=${body.challenge}` })).status).toBe(401);
    t.clock.advance(5 * 60_000);
    const late = await codeStep(t, body.challenge, codeNow(t, secret));
    expect(late.status).toBe(401);
    expect(late.body.error.param).toBe("challenge");
  });

  test("a recovery code signs in once, and its use is audited", async () => {
    const t = await appWithAdmin();
    const { recoveryCodes } = await enrol(t, await signInWithPassword(t));
    const [code] = recoveryCodes;
    const first = await passwordStep(t);
    // As typed from paper: upper case and spaces are fine.
    const signedIn = await codeStep(t, first.body.challenge, ` ${code!.toUpperCase().replaceAll("-", " ")} `);
    expect(signedIn.status).toBe(200);
    const used = auditActions(t).filter((a) => a.action === "recovery_code.use");
    expect(used).toHaveLength(1);
    expect(used[0]!.actor_type).toBe("admin");

    const second = await passwordStep(t);
    expect((await codeStep(t, second.body.challenge, code!)).status).toBe(401);
    const s = sessionOf(await codeStep(t, second.body.challenge, recoveryCodes[1]!));
    expect((await send(t, "GET", "/dashboard/api/account/second-factor", { cookie: s.cookie })).body.recovery_codes_left).toBe(8);
  });

  test("wrong codes are throttled as passwords are: locked out, even the right code, until the lockout ends", async () => {
    const t = await appWithAdmin({ PARLEY_LOGIN_MAX_FAILURES: "3", PARLEY_LOGIN_LOCKOUT_MINUTES: "15" });
    const { secret } = await enrol(t, await signInWithPassword(t));
    t.clock.advance(60_000);
    const { body } = await passwordStep(t);
    expect((await codeStep(t, body.challenge, "000000")).status).toBe(401);
    expect((await codeStep(t, body.challenge, "111111")).status).toBe(401);
    // The right password again does not wipe the count of wrong codes.
    const again = await passwordStep(t);
    expect(again.status).toBe(200);
    expect((await codeStep(t, again.body.challenge, "222222")).status).toBe(401);
    const locked = await codeStep(t, body.challenge, codeNow(t, secret));
    expect(locked.status).toBe(429);
    expect(locked.headers.get("retry-after")).toBeTruthy();
    expect((await passwordStep(t)).status).toBe(429);

    t.clock.advance(15 * 60_000);
    const after = await passwordStep(t);
    expect((await codeStep(t, after.body.challenge, codeNow(t, secret))).status).toBe(200);
  });

  test("sign-ins with a code from one address do not add up to its lockout (an office shares one address)", async () => {
    // One failure locks an account, four an address: five right sign-ins in a row must all pass.
    const t = await appWithAdmin({ PARLEY_LOGIN_MAX_FAILURES: "1", PARLEY_LOGIN_LOCKOUT_MINUTES: "15" });
    const { secret } = await enrol(t, await signInWithPassword(t));
    for (let i = 0; i < 5; i++) {
      t.clock.advance(30_000);
      const { status, body } = await passwordStep(t);
      expect(status).toBe(200);
      expect((await codeStep(t, body.challenge, codeNow(t, secret))).status).toBe(200);
    }
  });

  test("removing the factor takes a current code; the next sign-in needs the password only", async () => {
    const t = await appWithAdmin();
    const first = await signInWithPassword(t);
    const { secret } = await enrol(t, first);
    t.clock.advance(60_000);
    const removal = (code: string) =>
      send(t, "POST", "/dashboard/api/account/second-factor/removal", { cookie: first.cookie, csrf: first.csrf, body: { code } });
    const wrong = await removal("123456");
    expect(wrong.status).toBe(422);
    expect(wrong.body.error.param).toBe("code");
    expect((await removal(codeNow(t, secret))).status).toBe(204);
    expect(auditActions(t).map((a) => a.action)).toContain("second_factor.disable");
    expect((await passwordStep(t)).headers.get("set-cookie")).toContain("parley_session=");
  });
});

describe("PARLEY_REQUIRE_MFA=1", () => {
  test("a local account without a second factor must enrol before anything else, enforced by the server", async () => {
    const t = await appWithAdmin({ PARLEY_REQUIRE_MFA: "1" });
    const s = await signInWithPassword(t);
    expect(s.body.second_factor).toEqual({ enrolled: false, must_enrol: true });

    const refused = [
      await send(t, "GET", "/v1/end-users", { cookie: s.cookie }),
      await send(t, "POST", "/v1/end-users", { cookie: s.cookie, csrf: s.csrf, body: { name: "Ada" } }),
      await send(t, "GET", "/dashboard/api/keys", { cookie: s.cookie }),
      await send(t, "POST", "/dashboard/api/projects", { cookie: s.cookie, csrf: s.csrf, body: { name: "other" } }),
      await send(t, "PUT", "/dashboard/api/session/tenant", { cookie: s.cookie, csrf: s.csrf, body: { project_id: s.body.tenant.project_id, mode: "live" } }),
      await send(t, "GET", "/dashboard/api/system", { cookie: s.cookie }),
    ];
    for (const r of refused) {
      expect(r.status).toBe(403);
      expect(r.body.error.message).toContain("second factor");
    }
    // What it may do: see itself, and enrol.
    expect((await send(t, "GET", "/dashboard/api/session", { cookie: s.cookie })).status).toBe(200);
    await enrol(t, s);
    expect((await send(t, "GET", "/dashboard/api/session", { cookie: s.cookie })).body.second_factor).toEqual({ enrolled: true, must_enrol: false });
    expect((await send(t, "POST", "/v1/end-users", { cookie: s.cookie, csrf: s.csrf, body: { name: "Ada" } })).status).toBe(201);
  });

  test("a session signed in through the identity provider is not held to it: its factors are the provider's", async () => {
    const t = await appWithAdmin({ PARLEY_REQUIRE_MFA: "1" });
    const admin = t.deps.db
      .query<{ id: string; email: string; role: "owner"; created_at: string; updated_at: string }, []>(
        "SELECT id, email, role, created_at, updated_at FROM admins",
      )
      .get()!;
    const { token } = t.deps.dashboardSessions.start(admin, "sso");
    expect((await send(t, "GET", "/v1/end-users", { cookie: `parley_session=${token}` })).status).toBe(200);
  });
});

describe("parley admin reset-mfa", () => {
  test("removes a lost second factor, audited as the operator's; the account signs in with its password again", async () => {
    const t = await appWithAdmin();
    await enrol(t, await signInWithPassword(t));
    const proc = Bun.spawn([process.execPath, join(import.meta.dir, "..", "..", "src", "cli.ts"), "admin", "reset-mfa", "ADMIN@clinic.example"], {
      env: { PATH: process.env.PATH ?? "", PARLEY_LOG_LEVEL: "silent", PARLEY_DATA_DIR: t.deps.config.dataDir },
      stdout: "pipe",
      stderr: "pipe",
    });
    const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
    expect(stdout).toContain("second factor removed for admin@clinic.example");
    const reset = auditActions(t).find((a) => a.action === "second_factor.reset");
    expect(reset?.actor_type).toBe("operator");
    expect((await passwordStep(t)).headers.get("set-cookie")).toContain("parley_session=");
  });
});
