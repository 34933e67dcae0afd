import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import { dashboardSessionOnly, refuseCrossSiteWrites, requestOrigin } from "../../http/auth";
import { ApiError } from "../../http/errors";
import { DASHBOARD_POWERS } from "../../http/roles";
import { carriesCsrfToken, isHttps } from "../../http/sessions";
import { portalCookie, type WearerSession } from "../../http/wearer-sessions";
import { adminActor, recordAudit } from "../audit/service";
import { findEndUser } from "../end-users/service";
import { SECURITY_HEADERS, TYPES } from "../dashboard/routes";
import { PORTAL_ASSETS } from "./assets";
import { issueInvite, redeemInvite, wearerActor } from "./invites";
import { redeemBody, type WearerView } from "./schema";
import { portalSsoRoutes } from "./sso";

const PORTAL_TYPES: Record<string, string> = { ...TYPES, webmanifest: "application/manifest+json" };

/** A file of web/me; the app's own paths (/me, /me/invite) are its page. */
function serve(path: string): Response {
  const name = path === "" || path === "invite" ? "index.html" : path;
  const body = PORTAL_ASSETS[name];
  if (body === undefined) throw new ApiError("not_found", `No portal file ${path}.`);
  const type = PORTAL_TYPES[name.slice(name.lastIndexOf(".") + 1)] ?? "application/octet-stream";
  const headers: Record<string, string> = { "content-type": type, "cache-control": "no-cache", ...SECURITY_HEADERS };
  // The app's page is /me itself, outside the worker's own folder (/me/): the worker may control it.
  if (name === "sw.js") headers["service-worker-allowed"] = "/me";
  return new Response(body, { headers });
}

/** The portal's session API at /me/api: redeeming a sign-in link, the session, signing out (decision 147). */
function sessionRoutes(deps: Deps) {
  const { portalSessions: sessions } = deps;
  const describe = (session: WearerSession): WearerView => {
    const user = findEndUser(deps.db, session.tenant, session.endUserId);
    return {
      end_user: { id: session.endUserId, name: user?.name ?? null, email: user?.email ?? null },
      csrf_token: session.csrfToken,
      may_delete: session.scopes.includes("recordings:write"),
    };
  };
  const current = (request: Request): WearerSession => {
    const session = sessions.ofRequest(request, deps.clock.now());
    if (!session) throw new ApiError("unauthorized", "Sign in with the link your administrator sent you.");
    if (!carriesCsrfToken(request, session)) throw new ApiError("forbidden", "This request changes state but lacks the session's CSRF token (X-CSRF-Token).");
    return session;
  };
  return new Elysia({ prefix: "/me/api" })
    .onBeforeHandle(({ request }) => refuseCrossSiteWrites(request))
    .post(
      "/invite",
      ({ request, set, server, body }) => {
        const { token, session } = redeemInvite(deps, body.token, requestOrigin(request, set, server));
        set.headers["set-cookie"] = portalCookie(token, sessions.cookieMaxAgeSeconds, isHttps(request));
        return describe(session);
      },
      { body: redeemBody },
    )
    .get("/session", ({ request }) => describe(current(request)))
    .delete("/session", ({ request, set, server }) => {
      const session = current(request);
      deps.db.transaction(() => {
        sessions.end(session);
        recordAudit(
          deps.db,
          wearerActor(session.endUserId, requestOrigin(request, set, server)),
          session.tenant,
          "portal.sign_out",
          [session.id],
          deps.clock.now(),
        );
      })();
      set.headers["set-cookie"] = portalCookie("", 0, isHttps(request));
      set.status = 204;
    });
}

/**
 * POST /dashboard/api/end-users/{id}/invite: the end user's page's button. The link is built
 * on the origin the administrator's browser uses (where the box is reachable from), falling
 * back to PARLEY_PUBLIC_URL.
 */
function inviteRoutes(deps: Deps) {
  return new Elysia({ prefix: "/dashboard/api" })
    .use(dashboardSessionOnly(deps, { roles: DASHBOARD_POWERS.invites }))
    .post("/end-users/:id/invite", ({ request, session, params, set }) => {
      if (!session.tenant) throw new ApiError("forbidden", "Choose a project first: the dashboard acts in one project and mode at a time.");
      const base = request.headers.get("origin") ?? deps.config.publicUrl;
      set.status = 201;
      return issueInvite(deps, session.tenant, params.id, adminActor(session), base);
    });
}

/** The wearer's portal: its files at /me (public: what they show needs a wearer's session), its session API and single sign-on, and the dashboard's invite button. */
export function portalRoutes(deps: Deps) {
  return new Elysia({ name: "parley.portal" })
    .use(sessionRoutes(deps))
    .use(portalSsoRoutes(deps))
    .use(inviteRoutes(deps))
    .get("/me", () => serve(""))
    .get("/me/*", ({ params }) => serve(params["*"]));
}
