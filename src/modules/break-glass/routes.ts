import type { Server } from "bun";
import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import { dashboardSessionOnly, type Principal, principalOfSession, requestOrigin } from "../../http/auth";
import { ApiError } from "../../http/errors";
import { idParam } from "../../http/schemas";
import type { DashboardSession } from "../../http/sessions";
import { openBreakGlassBody } from "./schema";
import { closeBreakGlass, listBreakGlass, openBreakGlass } from "./service";

/** The session's Principal in its project and mode, with where the request came from (for the audit log). */
function actingAs(session: DashboardSession, request: Request, set: { headers: Record<string, unknown> }, server: Server<unknown> | null): Principal {
  const { tenant } = session;
  if (!tenant) throw new ApiError("forbidden", "Choose a project first: break-glass opens one end user of one project and mode.");
  return { ...principalOfSession({ ...session, tenant }), origin: requestOrigin(request, set, server) };
}

/**
 * Break-glass at /dashboard/api/break-glass (decision 137): a person opens it, so only a
 * dashboard session reaches these routes, never an API key. Every role sees the record;
 * compliance and viewer accounts open grants, their opener or an owner closes one early.
 */
export function breakGlassRoutes(deps: Deps) {
  const { db, clock } = deps;
  return new Elysia({ name: "parley.break-glass", prefix: "/dashboard/api" })
    .use(dashboardSessionOnly(deps))
    .get("/break-glass", ({ session, request, set, server }) => listBreakGlass(db, actingAs(session, request, set, server), clock.now()))
    .post(
      "/break-glass",
      ({ session, request, set, server, body }) => {
        const grant = openBreakGlass(deps, actingAs(session, request, set, server), body, clock.now());
        set.status = 201;
        return grant;
      },
      { body: openBreakGlassBody },
    )
    .delete(
      "/break-glass/:id",
      ({ session, request, set, server, params }) => closeBreakGlass(deps, actingAs(session, request, set, server), params.id, clock.now()),
      {
        params: idParam,
      },
    );
}
