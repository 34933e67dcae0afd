import { beforeAll, describe, expect, test } from "bun:test";
import { ROLES, type Role } from "../../src/http/roles";
import { createAdmin } from "../../src/modules/admins/service";
import { createApiKey } from "../../src/modules/keys/service";
import { appRoutes, type Matrix, matrixFixture, routes } from "./matrix-fixture";

/*
 * The role matrix (issue 32, decision 136): every route of the app called with a dashboard
 * session of each role, in the owner's project and mode (matrix-fixture.ts), against the role
 * table written out here, apart from the code's. The owner's and admin's writes really
 * happen, so reads go first and deletions last.
 */

let t: Matrix["t"];
let own: Matrix["own"];
let scopeOf: Matrix["scopeOf"];
let request: Matrix["request"];
let fillPath: Matrix["fillPath"];
let ownerProjectId = "";

/** What each role may do under /v1, by scope; content routes are refused to compliance and viewer, naming break-glass. */
const ROLE_TABLE: Record<Role, readonly string[] | "every scope"> = {
  owner: "every scope",
  admin: "every scope",
  compliance: [
    "audit:read",
    "legal_holds:read",
    "legal_holds:write",
    "exports:read",
    "exports:write",
    "disclosures:read",
    "config:read",
    "end_users:read",
    "devices:read",
    "recordings:read",
  ],
  viewer: ["devices:read", "firmware:read"],
};

/** Content: audio, transcript text, summaries, search and Ask. */
const CONTENT_SCOPES = ["transcriptions:read", "summaries:read", "ask:read", "ask:write"];
const CONTENT_ROUTES = ["GET /v1/recordings/:id/audio", "POST /v1/recordings/search"];

/** Routes the OpenAPI document gives no scope: a device's own, or a live key's; no session in test mode reaches them. */
const UNSCOPED: Record<string, null> = {
  "POST /v1/devices/:id/token/refresh": null,
  "POST /v1/devices/:id/heartbeat": null,
  "POST /v1/devices/:id/commands/:cmd_id/complete": null,
  "GET /v1/devices/:id/ota/:ota_id/firmware": null,
  // Live secret keys only; the matrix acts in test mode (roles in live mode: test/modules/roles.test.ts).
  "POST /v1/firmware-releases": null,
  "POST /v1/firmware-releases/:id/publish": null,
};

type Expected = "allowed" | "refused" | "break-glass";

function expected(role: Role, route: string): Expected {
  const scope = scopeOf.get(route);
  if (!scope) return "refused";
  const table = ROLE_TABLE[role];
  if (table === "every scope") return "allowed";
  if (CONTENT_SCOPES.includes(scope) || CONTENT_ROUTES.includes(route)) return "break-glass";
  return table.includes(scope) ? "allowed" : "refused";
}

type Session = { role: Role; headers: Record<string, string> };
const sessions: Session[] = [];

async function sessionOf(role: Role): Promise<Session> {
  const email = `${role}@matrix.example`;
  const password = "correct horse battery staple";
  await createAdmin(t.deps.db, email, password, role, t.clock.now());
  const signedIn = await t.call("POST", "/dashboard/api/session", { body: { email, password } });
  const headers = { cookie: signedIn.headers.get("set-cookie")!.split(";")[0]!, "x-csrf-token": signedIn.body.csrf_token };
  const chosen = await t.call("PUT", "/dashboard/api/session/tenant", { headers, body: { project_id: ownerProjectId, mode: "test" } });
  expect(chosen.body.admin.role).toBe(role);
  return { role, headers };
}

/** Reads first, then writes, deletions last, so what an allowed write changes comes after every read; refusals before allowed calls. */
const byEffect = (route: string) => ({ GET: 0, POST: 1, PUT: 1, PATCH: 1, DELETE: 2 })[route.split(" ")[0]!] ?? 1;
const roleOrder: Role[] = ["viewer", "compliance", "admin", "owner"];

describe("role matrix", () => {
  beforeAll(async () => {
    const f = await matrixFixture();
    ({ t, own, scopeOf, request, fillPath } = f);
    ownerProjectId = f.owner.project.id;
    for (const role of roleOrder) sessions.push(await sessionOf(role));
  });

  test("every role is in the table, and every unscoped route is named", () => {
    expect([...ROLES].sort() as string[]).toEqual(Object.keys(ROLE_TABLE).sort());
    expect(routes.filter((r) => !scopeOf.get(r)).sort()).toEqual(Object.keys(UNSCOPED).sort());
  });

  test.each([...routes].sort((a, b) => byEffect(a) - byEffect(b)))("%s answers each role's session as the role table says", async (route) => {
    const [method, pattern] = route.split(" ") as [string, string];
    const { body, query } = request(route);
    const path = fillPath(pattern) + (query ? `?${query}` : "");
    // The rate limit counts per second of the app's clock, which stands still otherwise.
    t.clock.advance(1_000);
    for (const { role, headers } of sessions) {
      const want = expected(role, route);
      const r = await t.call(method, path, { headers, body });
      const got = { route, role, status: r.status, code: r.body?.error?.code, message: r.body?.error?.message };
      if (want === "allowed") {
        // Reads answer 200 (the control above proves the request is right); a write may meet what an earlier one did (404, 409), never a refusal.
        if (method === "GET") expect({ route, role, status: r.status }).toEqual({ route, role, status: 200 });
        else expect({ route, role, refused: [401, 403].includes(r.status) || r.status >= 500 ? got : false }).toEqual({ route, role, refused: false });
      } else {
        expect({ route, role, status: r.status, code: got.code }).toEqual({ route, role, status: 403, code: "forbidden" });
        if (want === "break-glass") expect(got.message).toContain("break-glass");
      }
    }
  });

  /** The dashboard's own routes: who may call each (every role, or those named); the rest answer 403. */
  const DASHBOARD: Record<string, readonly Role[] | "every role" | string> = {
    "GET /dashboard/api/setup": "before any session",
    "POST /dashboard/api/setup": "before any session",
    "POST /dashboard/api/session": "signs in",
    "GET /dashboard/api/sso/start": "signs in with single sign-on (test/modules/sso.test.ts)",
    "GET /dashboard/api/sso/callback": "signs in with single sign-on (test/modules/sso.test.ts)",
    "DELETE /dashboard/api/session": "signs out the session calling it (test/modules/admins.test.ts)",
    "GET /dashboard/api/system/doctor": "the doctor token's, not a session's (decision 119)",
    "DELETE /dashboard/api/break-glass/:id": "its opener or an owner (test/modules/roles.test.ts)",
    "POST /dashboard/api/session/second-factor": "signs in (the second step)",
    "POST /dashboard/api/account/second-factor/enrolment": "the person's own second factor, whatever the role (decision 151's tests)",
    "POST /dashboard/api/account/second-factor/confirmation": "the person's own second factor, whatever the role (decision 151's tests)",
    "POST /dashboard/api/account/second-factor/removal": "the person's own second factor, whatever the role (decision 151's tests)",
    "GET /dashboard/api/account/second-factor": "every role",
    "GET /dashboard/api/session": "every role",
    "PUT /dashboard/api/session/tenant": "every role",
    "GET /dashboard/api/reachability": "every role",
    "GET /dashboard/api/system": "every role",
    "GET /dashboard/api/system/checks": "every role",
    "GET /dashboard/api/break-glass": "every role",
    "POST /dashboard/api/break-glass": ["compliance", "viewer"],
    "POST /dashboard/api/projects": ["owner"],
    "GET /dashboard/api/administrators": ["owner"],
    "POST /dashboard/api/administrators": ["owner"],
    "PATCH /dashboard/api/administrators/:id": ["owner"],
    "DELETE /dashboard/api/administrators/:id": ["owner"],
    "GET /dashboard/api/keys": ["owner", "admin"],
    "POST /dashboard/api/keys": ["owner", "admin"],
    "DELETE /dashboard/api/keys/:id": ["owner", "admin"],
    "POST /dashboard/api/recordings/reprocess-failed": ["owner", "admin"],
    "POST /dashboard/api/end-users/:id/invite": ["owner", "admin"],
    "GET /dashboard/api/audit-events": ["owner", "compliance"],
  };
  const dashboardRoutes = appRoutes.filter((r) => r.split(" ")[1]!.startsWith("/dashboard/api/"));

  test("every dashboard route is in the table", () => {
    expect(dashboardRoutes.sort()).toEqual(Object.keys(DASHBOARD).sort());
  });

  test.each(Object.entries(DASHBOARD).filter(([, who]) => typeof who !== "string" || who === "every role"))(
    "%s answers each role as the table says",
    async (route, who) => {
      const [method, pattern] = route.split(" ") as [string, string];
      // Each call gets its own target, so an allowed write does not spend the next role's.
      const target = async () => {
        if (pattern.startsWith("/dashboard/api/administrators/"))
          return (await createAdmin(t.deps.db, `spare-${crypto.randomUUID()}@matrix.example`, "correct horse battery staple", "viewer", t.clock.now())).id;
        if (pattern.startsWith("/dashboard/api/keys/")) return createApiKey(t.deps.db, { project: "matrix-owner", mode: "test" }, t.clock.now()).id;
        if (pattern.startsWith("/dashboard/api/end-users/")) return own.endUser!;
        return "";
      };
      const bodies: Record<string, () => unknown> = {
        "PUT /dashboard/api/session/tenant": () => ({ project_id: ownerProjectId, mode: "test" }),
        "POST /dashboard/api/break-glass": () => ({ end_user_id: own.endUser, reason: "Matrix: support case 1234" }),
        "POST /dashboard/api/projects": () => ({ name: `matrix ${crypto.randomUUID()}` }),
        "POST /dashboard/api/administrators": () => ({
          email: `new-${crypto.randomUUID()}@matrix.example`,
          password: "correct horse battery staple",
          role: "viewer",
        }),
        "PATCH /dashboard/api/administrators/:id": () => ({ role: "compliance" }),
        "POST /dashboard/api/keys": () => ({ kind: "secret", name: "matrix" }),
      };
      t.clock.advance(1_000);
      for (const { role, headers } of sessions) {
        const path = pattern.replace(":id", await target());
        const r = await t.call(method, path, { headers, body: bodies[route]?.() });
        const allowed = who === "every role" || (who as readonly Role[]).includes(role);
        const seen = { route, role, status: r.status, error: r.body?.error };
        if (allowed) expect({ ...seen, ok: r.status < 300 }).toEqual({ ...seen, ok: true });
        else expect({ route, role, status: r.status, code: r.body?.error?.code }).toEqual({ route, role, status: 403, code: "forbidden" });
      }
    },
  );
});
