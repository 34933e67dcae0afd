import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import { authentication, authorize, dashboardSessionOnly } from "../../http/auth";
import { pageOf } from "../../http/pagination";
import { DASHBOARD_POWERS } from "../../http/roles";
import { auditEventSchema, listAuditEventsQuery } from "./schema";
import { listAuditEvents, listOrganizationAuditEvents } from "./service";

/** The organization's own rows, for the dashboard's Compliance page: a session of an owner or a compliance officer, never a key (keys belong to one project). */
export function organizationAuditRoutes(deps: Deps) {
  return new Elysia({ name: "parley.audit.organization", prefix: "/dashboard/api" })
    .use(dashboardSessionOnly(deps, { roles: DASHBOARD_POWERS.organizationAudit }))
    .get("/audit-events", ({ query }) => listOrganizationAuditEvents(deps.db, query), { query: listAuditEventsQuery });
}

export function auditRoutes(deps: Deps) {
  const { db } = deps;
  return new Elysia({ name: "parley.audit", detail: { tags: ["Audit"] } })
    .use(authentication(deps))
    .get("/audit-events", ({ principal, query }) => listAuditEvents(db, authorize(principal, "audit:read"), query), {
      query: listAuditEventsQuery,
      response: { 200: pageOf(auditEventSchema) },
      detail: {
        summary: "List audit events",
        description:
          "Scope audit:read (secret keys hold it). The access audit log of the key's project and mode, newest first: reads of audio, transcripts, summaries, search results and Ask context, deletions, legal holds, key and admin actions. Filters: resource_id, actor_id, action, created_after (inclusive), created_before (exclusive). Rows are hash-chained; `parley audit verify` checks the chain.",
      },
    });
}
