import type { Database } from "bun:sqlite";
import type { Principal } from "../../http/auth";
import type { Page } from "../../http/pagination";
import { disclosuresOf } from "../audit/service";
import { loadEndUser } from "../end-users/service";
import { toCsv } from "./csv";
import type { Disclosure } from "../audit/schema";

/**
 * GET /end-users/{id}/disclosures: who read or exported this person's content, when, with
 * which key or session and why, newest first (HIPAA 164.528; decision 140). The end user is
 * loaded as for any read of them: an end-user-scoped key sees only its own, and a deleted
 * end user's accounting stays, as the audit log it is drawn from does.
 */
export function listDisclosures(db: Database, principal: Principal, endUserId: string, page: { limit: number; cursor?: string }): Page<Disclosure> {
  const user = loadEndUser(db, principal, endUserId);
  return disclosuresOf(db, principal, user.id, page);
}

/** Every disclosure of the end user, newest first, as CSV (the dashboard's download). */
export function disclosuresCsv(db: Database, principal: Principal, endUserId: string): string {
  const user = loadEndUser(db, principal, endUserId);
  const all: Disclosure[] = [];
  let cursor: string | undefined;
  do {
    const page = disclosuresOf(db, principal, user.id, { limit: 100, cursor });
    all.push(...page.data);
    cursor = page.next_cursor;
  } while (cursor);
  return toCsv(
    [
      "created_at",
      "action",
      "actor_type",
      "actor_id",
      "actor_email",
      "credential_id",
      "reason",
      "break_glass_id",
      "resource_ids",
      "request_id",
      "client_address",
      "id",
    ],
    all.map((d) => [
      d.created_at,
      d.action,
      d.actor.type,
      d.actor.id,
      d.actor.email,
      d.credential_id,
      d.reason,
      d.break_glass_id,
      d.resource_ids.join(" "),
      d.request_id,
      d.client_address,
      d.id,
    ]),
  );
}
