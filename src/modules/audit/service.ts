import type { Database } from "bun:sqlite";
import { requireUnconfined } from "../../http/access";
import type { Principal } from "../../http/auth";
import type { Page, PageRequest } from "../../http/pagination";
import type { AuditAction } from "./actions";
import { type AuditRow, type ChainVerdict, type Subject, verifyChain } from "./chain";
import type { AuditEvent, Disclosure, ListAuditEventsQuery } from "./schema";
import { auditRowsAbout, chainHead, chainRows, indexMismatch, listAuditRows, listDisclosureRows, subjectsOfExportRow } from "./store";
import type { Tenant } from "../../tenancy";

export { type Actor, type AuditTrail, type Disclosed, actorOf, adminActor, ChainedAuditTrail, operatorActor, recordAudit, systemActor } from "./trail";

function toAuditEvent(row: AuditRow): AuditEvent {
  return {
    id: row.id,
    sequence: row.seq,
    action: row.action as AuditAction,
    actor: { type: row.actor_type, id: row.actor_id, admin_email: row.admin_email, device_id: row.device_id },
    resource_ids: JSON.parse(row.resource_ids) as string[],
    request_id: row.request_id,
    client_address: row.client_address,
    credential_id: row.credential_id,
    subjects: row.subjects === null ? null : (JSON.parse(row.subjects) as Subject[]),
    created_at: row.created_at,
    prev_hash: row.prev_hash,
    hash: row.hash,
  };
}

const iso = (value: string | undefined) => (value === undefined ? undefined : new Date(value).toISOString());

/** GET /audit-events: the key's project and mode only, newest first; the whole project's reads, so never for a key confined to one end user. */
export function listAuditEvents(db: Database, principal: Principal, q: ListAuditEventsQuery): Page<AuditEvent> {
  requireUnconfined(principal, "read the audit log");
  const filter = { resourceId: q.resource_id, actorId: q.actor_id, action: q.action, createdAfter: iso(q.created_after), createdBefore: iso(q.created_before) };
  return listAuditRows(db, principal, filter, { limit: q.limit, cursor: q.cursor }, toAuditEvent);
}

/**
 * GET /dashboard/api/audit-events: the organization's own rows, which no project's log shows
 * (dashboard sign-ins and sign-outs, refused single sign-ons, accounts and their roles,
 * projects), newest first, with the project log's filters. For owners and compliance.
 */
export function listOrganizationAuditEvents(db: Database, q: ListAuditEventsQuery): Page<AuditEvent> {
  const filter = { resourceId: q.resource_id, actorId: q.actor_id, action: q.action, createdAfter: iso(q.created_after), createdBefore: iso(q.created_before) };
  return listAuditRows(db, null, filter, { limit: q.limit, cursor: q.cursor }, toAuditEvent);
}

/** `parley audit verify`: the whole chain, every tenant's rows, in order; then the indexes of the ids and end users they name, against them. */
export function verifyAuditChain(db: Database): ChainVerdict {
  const verdict = verifyChain(chainRows(db));
  if (!verdict.ok) return verdict;
  const mismatch = indexMismatch(db);
  return mismatch ? { ok: false, rows: verdict.rows, ...mismatch } : verdict;
}

/** An export's chain-of-custody record: every audit row naming its recordings or itself, with their hashes, and the chain's head. */
export function custodyOf(
  db: Database,
  tenant: Tenant,
  ids: readonly string[],
): { chain_head: { sequence: number; hash: string } | null; events: AuditEvent[] } {
  return { chain_head: chainHead(db), events: auditRowsAbout(db, tenant, ids).map(toAuditEvent) };
}

/** One end user's accounting of disclosures (decision 140): the tenant's rows naming them as a subject, newest first, with their reason. */
export function disclosuresOf(db: Database, tenant: Tenant, endUserId: string, page: PageRequest): Page<Disclosure> {
  return listDisclosureRows(db, tenant, endUserId, page, (row) => {
    const subject = (JSON.parse(row.subjects ?? "[]") as Subject[]).find((s) => s.end_user_id === endUserId);
    return {
      id: row.id,
      created_at: row.created_at,
      action: row.action as AuditAction,
      resource_ids: JSON.parse(row.resource_ids) as string[],
      actor: { type: row.actor_type, id: row.actor_id, email: row.admin_email },
      credential_id: row.credential_id,
      reason: subject?.reason ?? null,
      break_glass_id: subject?.break_glass_id ?? null,
      request_id: row.request_id,
      client_address: row.client_address,
    };
  });
}

/**
 * The end users an export's archive discloses, as its creation recorded them (their
 * recordings may be gone since): each download discloses them again, with the matter.
 */
export function endUsersOfExport(db: Database, tenant: Tenant, exportId: string): string[] {
  return (JSON.parse(subjectsOfExportRow(db, tenant, exportId) ?? "[]") as Subject[]).map((s) => s.end_user_id);
}
