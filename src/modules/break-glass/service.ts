import type { Database } from "bun:sqlite";
import type { Deps } from "../../deps";
import { bodyField } from "../../http/access";
import type { BreakGlassGrant, Principal } from "../../http/auth";
import { ApiError } from "../../http/errors";
import { readsContent } from "../../http/roles";
import type { Tenant } from "../../tenancy";
import { loadEndUser } from "../end-users/service";
import type { BreakGlassGrantView, OpenBreakGlassBody } from "./schema";
import { closeGrant, findGrant, type GrantRow, insertGrant, listGrants, openGrantsOf } from "./store";

/** The Compliance page lists this many of the most recent grants: a record to glance at, the audit log keeps every open and close. */
const LISTED = 100;

function toView(row: GrantRow, now: Date): BreakGlassGrantView {
  const status = row.closed_at ? "closed" : row.expires_at > now.toISOString() ? "open" : "expired";
  return {
    id: row.id,
    end_user_id: row.end_user_id,
    admin: { id: row.admin_id, email: row.admin_email },
    reason: row.reason,
    status,
    opened_at: row.opened_at,
    expires_at: row.expires_at,
    closed_at: row.closed_at,
    closed_by: row.closed_by,
  };
}

/** A session's Principal with its role and person, as break-glass needs them. */
type Person = Principal & { adminId: string; adminEmail: string; role: NonNullable<Principal["role"]> };

function personOf(principal: Principal): Person {
  if (!principal.adminId || !principal.adminEmail || !principal.role) throw new ApiError("forbidden", "Break-glass is opened by a person, from the dashboard.");
  return principal as Person;
}

/**
 * Opens break-glass for one end user of the tenant (decision 137): for a role that does not
 * see content, for PARLEY_BREAK_GLASS_MINUTES, audited. One open grant per person and end
 * user: a second is 409 until the first closes or expires.
 */
export function openBreakGlass(deps: Pick<Deps, "db" | "audit" | "config">, principal: Principal, body: OpenBreakGlassBody, now: Date): BreakGlassGrantView {
  const person = personOf(principal);
  if (readsContent(person.role))
    throw new ApiError("forbidden", `The ${person.role} role sees content already: break-glass is for compliance and viewer accounts.`);
  const endUser = loadEndUser(deps.db, principal, body.end_user_id, bodyField("end_user_id"));
  const row = deps.db
    .transaction(() => {
      const open = openGrantsOf(deps.db, person.adminId, principal, now).find((g) => g.end_user_id === endUser.id);
      if (open) throw new ApiError("resource_conflict", `Break-glass is already open for ${endUser.id} until ${open.expires_at}.`, { param: "end_user_id" });
      const expiresAt = new Date(now.getTime() + deps.config.admins.breakGlassMinutes * 60_000);
      const grant = insertGrant(
        deps.db,
        principal,
        { endUserId: endUser.id, adminId: person.adminId, adminEmail: person.adminEmail, reason: body.reason, expiresAt },
        now,
      );
      deps.audit.record(principal, principal, "break_glass.open", [grant.id, endUser.id]);
      return grant;
    })
    .immediate();
  return toView(row, now);
}

/** Closes a grant early: its opener, or an owner. 409 when it is closed or expired already. */
export function closeBreakGlass(deps: Pick<Deps, "db" | "audit">, principal: Principal, id: string, now: Date): BreakGlassGrantView {
  const person = personOf(principal);
  deps.db
    .transaction(() => {
      const row = findGrant(deps.db, principal, id);
      if (!row) throw new ApiError("not_found", `No break-glass grant ${id}.`, { param: "id" });
      if (row.admin_id !== person.adminId && person.role !== "owner")
        throw new ApiError("forbidden", "Only whoever opened a break-glass grant, or an owner, closes it.");
      if (!closeGrant(deps.db, id, person.adminEmail, now))
        throw new ApiError("resource_conflict", `Break-glass grant ${id} is ${toView(row, now).status} already.`);
      deps.audit.record(principal, principal, "break_glass.close", [id, row.end_user_id]);
    })
    .immediate();
  return toView(findGrant(deps.db, principal, id)!, now);
}

/** The tenant's recent grants, open and closed, with who and why: the Compliance page's record. */
export function listBreakGlass(db: Database, tenant: Tenant, now: Date): { data: BreakGlassGrantView[] } {
  return { data: listGrants(db, tenant, LISTED).map((row) => toView(row, now)) };
}

/** A person's open grants in a tenant, by end user: what their session's Principal carries (auth.ts). */
export function openBreakGlassOf(db: Database, adminId: string, tenant: Tenant, now: Date): ReadonlyMap<string, BreakGlassGrant> {
  return new Map(openGrantsOf(db, adminId, tenant, now).map((g) => [g.end_user_id, { id: g.id, reason: g.reason, expiresAt: g.expires_at }]));
}
