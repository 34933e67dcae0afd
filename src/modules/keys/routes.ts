import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import { dashboardSessionOnly } from "../../http/auth";
import { ApiError } from "../../http/errors";
import { idParam } from "../../http/schemas";
import type { DashboardSession } from "../../http/sessions";
import { DASHBOARD_POWERS } from "../../http/roles";
import { SCOPES } from "../../http/scopes";
import { adminActor } from "../audit/service";
import { createKeyBody } from "./schema";
import { createTenantKey, listTenantKeys, revokeTenantKey } from "./service";

function tenantOf(session: DashboardSession) {
  if (!session.tenant) throw new ApiError("forbidden", "Choose a project first: keys belong to one project and mode.");
  return session.tenant;
}

/**
 * API keys are managed in the dashboard, not through the API (spec 5 rule 2): these routes
 * answer an administrator's session only, never a key (decision 094), in the session's project and mode.
 */
export function keysRoutes(deps: Deps) {
  const { db, clock } = deps;
  return new Elysia({ name: "parley.keys", prefix: "/dashboard/api" })
    .use(dashboardSessionOnly(deps, { roles: DASHBOARD_POWERS.keys }))
    .get("/keys", ({ session }) => ({ data: listTenantKeys(db, tenantOf(session)), scopes: SCOPES }))
    .post(
      "/keys",
      ({ session, body, set }) => {
        const tenant = tenantOf(session);
        // Stated, not inferred: a restricted key whose scopes were all unticked must not become a secret key.
        if (body.kind === "restricted" && !body.scopes?.length)
          throw new ApiError("validation_error", "A restricted key needs at least one scope.", { param: "scopes" });
        if (body.kind === "secret" && body.scopes?.length)
          throw new ApiError("validation_error", "A secret key holds every scope; choose restricted to name some.", { param: "scopes" });
        const key = createTenantKey(
          db,
          tenant,
          { name: body.name ?? undefined, scopes: body.scopes, endUserId: body.end_user_id ?? undefined },
          clock.now(),
          adminActor(session),
        );
        deps.log.info("dashboard: API key created", { key_id: key.id, admin_id: session.adminId, project_id: tenant.projectId, mode: tenant.mode });
        set.status = 201;
        return key;
      },
      { body: createKeyBody },
    )
    .delete(
      "/keys/:id",
      ({ session, params, set }) => {
        revokeTenantKey(deps, tenantOf(session), params.id, clock.now(), adminActor(session));
        deps.log.info("dashboard: API key revoked", { key_id: params.id, admin_id: session.adminId });
        set.status = 204;
      },
      { params: idParam },
    );
}
