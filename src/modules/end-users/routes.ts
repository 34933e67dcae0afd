import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import { authentication, authorize } from "../../http/auth";
import { idempotent } from "../../http/idempotency";
import { idParam } from "../../http/schemas";
import { releaseDevicesOfEndUser } from "../devices/service";
import { createEndUserBody, listEndUsersQuery, updateEndUserBody } from "./schema";
import { createEndUser, deleteEndUser, getEndUser, listEndUsers, updateEndUser } from "./service";

export function endUsersRoutes(deps: Deps) {
  const { db, clock } = deps;
  return new Elysia({ name: "parley.end-users", detail: { tags: ["End users"] } })
    .use(authentication(deps))
    .post(
      "/end-users",
      (ctx) =>
        idempotent(deps, ctx, () => {
          const principal = authorize(ctx.principal, "end_users:write");
          ctx.set.status = 201;
          return createEndUser(db, principal, ctx.body, clock.now());
        }),
      { body: createEndUserBody, detail: { summary: "Create an end user", description: "Scope end_users:write. Idempotency-Key supported." } },
    )
    .get("/end-users", ({ principal, query }) => listEndUsers(db, authorize(principal, "end_users:read"), query), {
      query: listEndUsersQuery,
      detail: { summary: "List end users", description: "Scope end_users:read. external_id is an exact, project-scoped match." },
    })
    .get("/end-users/:id", ({ principal, params }) => getEndUser(db, authorize(principal, "end_users:read"), params.id), {
      params: idParam,
      detail: { summary: "Get an end user", description: "Scope end_users:read. Deleted end users stay readable with deleted_at." },
    })
    .patch("/end-users/:id", ({ principal, params, body }) => updateEndUser(db, authorize(principal, "end_users:write"), params.id, body, clock.now()), {
      params: idParam,
      body: updateEndUserBody,
      detail: { summary: "Update an end user", description: "Scope end_users:write. Absent fields are kept, null clears. 409 on a deleted end user." },
    })
    .delete(
      "/end-users/:id",
      ({ principal, params, set }) => {
        const caller = authorize(principal, "end_users:write");
        db.transaction(() => {
          deleteEndUser(deps, caller, params.id, clock.now());
          releaseDevicesOfEndUser(deps, caller, params.id, clock.now());
        })();
        set.status = 204;
      },
      { params: idParam, detail: { summary: "Delete an end user", description: "Scope end_users:write. Read-only afterwards; data retained; its devices are unbound." } },
    );
}
