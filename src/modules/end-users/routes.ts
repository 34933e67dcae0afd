import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import { authentication, authorize } from "../../http/auth";
import { idempotency } from "../../http/idempotency";
import { idParam, noContent } from "../../http/schemas";
import { pageOf } from "../../http/pagination";
import { createEndUserBody, endUserSchema, listEndUsersQuery, updateEndUserBody } from "./schema";
import { createEndUser, deleteEndUser, getEndUser, listEndUsers, updateEndUser } from "./service";

export function endUsersRoutes(deps: Deps) {
  const { db, clock } = deps;
  return new Elysia({ name: "parley.end-users", detail: { tags: ["End users"] } })
    .use(authentication(deps))
    .use(idempotency(deps))
    .post(
      "/end-users",
      ({ principal, body, set }) => {
        const caller = authorize(principal, "end_users:write");
        set.status = 201;
        return createEndUser(db, caller, body, clock.now());
      },
      {
        idempotent: true,
        response: { 201: endUserSchema },
        body: createEndUserBody,
        detail: { summary: "Create an end user", description: "Scope end_users:write. Idempotency-Key supported." },
      },
    )
    .get("/end-users", ({ principal, query }) => listEndUsers(db, authorize(principal, "end_users:read"), query), {
      query: listEndUsersQuery,
      response: { 200: pageOf(endUserSchema) },
      detail: { summary: "List end users", description: "Scope end_users:read. external_id is an exact, project-scoped match." },
    })
    .get("/end-users/:id", ({ principal, params }) => getEndUser(db, authorize(principal, "end_users:read"), params.id), {
      params: idParam,
      response: { 200: endUserSchema },
      detail: { summary: "Get an end user", description: "Scope end_users:read. Deleted end users stay readable with deleted_at." },
    })
    .patch("/end-users/:id", ({ principal, params, body }) => updateEndUser(db, authorize(principal, "end_users:write"), params.id, body, clock.now()), {
      params: idParam,
      body: updateEndUserBody,
      response: { 200: endUserSchema },
      detail: { summary: "Update an end user", description: "Scope end_users:write. Absent fields are kept, null clears. 409 on a deleted end user." },
    })
    .delete(
      "/end-users/:id",
      ({ principal, params, set }) => {
        const caller = authorize(principal, "end_users:write");
        deleteEndUser(deps, caller, params.id, clock.now());
        set.status = 204;
      },
      {
        params: idParam,
        response: noContent,
        detail: { summary: "Delete an end user", description: "Scope end_users:write. Read-only afterwards; data retained; its devices are unbound." },
      },
    );
}
