import type { Server } from "bun";
import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import { dashboardSessionOnly, refuseCrossSiteWrites, requireRole } from "../../http/auth";
import { ApiError } from "../../http/errors";
import { DASHBOARD_POWERS } from "../../http/roles";
import { idParam } from "../../http/schemas";
import { isHttps, sessionCookie } from "../../http/sessions";
import { adminActor } from "../audit/service";
import { createProject } from "../projects/service";
import { requestIdOf } from "../../http/request-id";
import { secondFactorRoutes } from "./mfa-routes";
import { changeRoleBody, createAdminBody, createProjectBody, secondStepBody, selectTenantBody, setupBody, signInBody } from "./schema";
import { changeAdminRole, createAdmin, createFirstAdmin, listAdmins, removeAdmin } from "./service";
import type { StartedSession } from "./sessions";

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|::ffff:127\.\d+\.\d+\.\d+)$/;

/** The caller's address, "unknown" when the app is not listening (tests calling app.handle). */
function addressOf(server: Server<unknown> | null, request: Request): string {
  return server?.requestIP(request)?.address ?? "unknown";
}

/**
 * Whether a request comes from the box itself. One relayed by a proxy (Forwarded,
 * X-Forwarded-For) is not: a reverse proxy on the box would make every visitor look local.
 */
function fromLoopback(server: Server<unknown> | null, request: Request): boolean {
  if (request.headers.has("forwarded") || request.headers.has("x-forwarded-for")) return false;
  return LOOPBACK.test(addressOf(server, request));
}

/** The dashboard's session API at /dashboard/api: first-run setup, sign-in and out, the project and mode switcher (decision 094). */
export function adminRoutes(deps: Deps) {
  const { db, dashboardSessions: sessions } = deps;

  const started = (request: Request, set: { headers: Record<string, unknown> }, { token, session }: StartedSession) => {
    set.headers["set-cookie"] = sessionCookie(token, sessions.cookieMaxAgeSeconds, isHttps(request));
    return sessions.describe(session);
  };

  const open = new Elysia()
    .onBeforeHandle(({ request }) => refuseCrossSiteWrites(request))
    // What the signed-out page needs in one request: the setup form or sign-in, and whether sign-in offers SSO.
    .get("/setup", ({ request, server }) => ({ open: sessions.setupOpen(), from_loopback: fromLoopback(server, request), sso: deps.config.oidc !== null }))
    .post(
      "/setup",
      async ({ request, server, body, set }) => {
        if (!sessions.setupOpen()) throw new ApiError("resource_conflict", "Setup is done: an administrator exists. Sign in instead.");
        if (!fromLoopback(server, request) && !sessions.isSetupToken(body.token)) {
          throw new ApiError("forbidden", "Setup works from the appliance itself, or with the setup token printed in the server's log at start.", {
            param: "token",
          });
        }
        // Creating it spends the setup token (migration 0022's trigger), as any new administrator does.
        const admin = await createFirstAdmin(db, body.email, body.password, deps.clock.now());
        deps.log.info("dashboard setup: first administrator created", { admin_id: admin.id });
        set.status = 201;
        return started(request, set, sessions.start(admin));
      },
      { body: setupBody },
    )
    .post(
      "/session",
      async ({ request, server, body, set }) => {
        const address = addressOf(server, request);
        // Who tried and from where, for the operator; never the password.
        const signedIn = await sessions.signIn(body.email, body.password, address).catch((err: unknown) => {
          if (err instanceof ApiError) deps.log.warn("dashboard sign-in refused", { email: body.email, address, code: err.code });
          throw err;
        });
        // A second factor is owed: no session yet, a challenge for the second step.
        if ("challenge" in signedIn) return { second_factor_required: true, challenge: signedIn.challenge };
        deps.log.info("dashboard sign-in", { admin_id: signedIn.session.adminId, address });
        return started(request, set, signedIn);
      },
      { body: signInBody },
    )
    .post(
      "/session/second-factor",
      ({ request, server, body, set }) => {
        const address = addressOf(server, request);
        let signedIn: StartedSession;
        try {
          signedIn = sessions.completeSignIn(body.challenge, body.code, { address, requestId: requestIdOf(set) ?? null });
        } catch (err) {
          // Logged as a refused password is (who is known only from a live challenge); never the code.
          if (err instanceof ApiError) deps.log.warn("dashboard sign-in refused at the second factor", { address, code: err.code, param: err.options.param });
          throw err;
        }
        deps.log.info("dashboard sign-in", { admin_id: signedIn.session.adminId, address, second_factor: true });
        return started(request, set, signedIn);
      },
      { body: secondStepBody },
    );

  // What a session that must enrol a second factor may still do: see itself and sign out (and enrol: mfa-routes.ts).
  const beforeSecondFactor = new Elysia()
    .use(dashboardSessionOnly(deps, { beforeSecondFactor: true }))
    .get("/session", ({ session }) => sessions.describe(session))
    .delete("/session", ({ request, session, set }) => {
      sessions.end(session);
      set.headers["set-cookie"] = sessionCookie("", 0, isHttps(request));
      set.status = 204;
    });

  const signedIn = new Elysia()
    .use(dashboardSessionOnly(deps))
    .put("/session/tenant", ({ session, body }) => sessions.describe(sessions.select(session, body.project_id, body.mode)), { body: selectTenantBody })
    .post(
      "/projects",
      ({ session, body, set }) => {
        requireRole(session, DASHBOARD_POWERS.projects);
        set.status = 201;
        const project = createProject(db, body.name.trim(), deps.clock.now());
        return { id: project.id, name: project.name };
      },
      { body: createProjectBody },
    );

  // The Administrators page's API: owners only (decision 136). Role changes and removals take effect at the person's next request.
  const administrators = new Elysia()
    .use(dashboardSessionOnly(deps, { roles: DASHBOARD_POWERS.administrators }))
    .get("/administrators", () => ({ data: listAdmins(db) }))
    .post(
      "/administrators",
      async ({ session, body, set }) => {
        const admin = await createAdmin(db, body.email, body.password, body.role, deps.clock.now(), adminActor(session));
        deps.log.info("dashboard: administrator created", { admin_id: admin.id, role: admin.role, by: session.adminId });
        set.status = 201;
        return admin;
      },
      { body: createAdminBody },
    )
    .patch(
      "/administrators/:id",
      ({ session, params, body }) => {
        const admin = changeAdminRole(db, { id: params.id }, body.role, deps.clock.now(), adminActor(session));
        deps.log.info("dashboard: administrator's role changed", { admin_id: admin.id, role: admin.role, by: session.adminId });
        return admin;
      },
      { params: idParam, body: changeRoleBody },
    )
    .delete(
      "/administrators/:id",
      ({ session, params, set }) => {
        const admin = removeAdmin(db, { id: params.id }, deps.clock.now(), adminActor(session));
        deps.log.info("dashboard: administrator removed", { admin_id: admin.id, by: session.adminId });
        set.status = 204;
      },
      { params: idParam },
    );

  return new Elysia({ name: "parley.admins", prefix: "/dashboard/api" })
    .use(open)
    .use(beforeSecondFactor)
    .use(secondFactorRoutes(deps))
    .use(signedIn)
    .use(administrators);
}
