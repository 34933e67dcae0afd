import type { Database, SQLQueryBindings } from "bun:sqlite";
import type { Page, PageRequest } from "../../http/pagination";
import { paginate } from "../../http/pagination";
import type { Tenant } from "../../tenancy";
import { type AuditRow, GENESIS_HASH, HASHED_COLUMNS, hashOf } from "./chain";

/** What a new row says; the chain columns (seq, prev_hash, hash) are filled in by appendAuditRows. */
export type AuditFields = Omit<AuditRow, "seq" | "prev_hash" | "hash">;

const STORED_COLUMNS = [...HASHED_COLUMNS, "hash"] as const;
const INSERT = `INSERT INTO audit_events (${STORED_COLUMNS.join(", ")}) VALUES (${STORED_COLUMNS.map(() => "?").join(", ")})`;

/**
 * Appends rows at the head of the chain, in order. Call inside a transaction (the caller's,
 * or the group commit's): the head is read in it, so rows rolled back leave no gap, and rows
 * appended concurrently by another connection (the CLI) either precede these or make their
 * commit fail; seq = head + 1 on the primary key makes a fork impossible to store.
 */
export function appendAuditRows(db: Database, batch: readonly AuditFields[]): void {
  const head = chainHead(db);
  let seq = head?.sequence ?? 0;
  let prev = head?.hash ?? GENESIS_HASH;
  const insert = db.query(INSERT);
  for (const fields of batch) {
    const unsigned = { ...fields, seq: ++seq, prev_hash: prev };
    const row: AuditRow = { ...unsigned, hash: hashOf(unsigned) };
    insert.run(...STORED_COLUMNS.map((column) => row[column]));
    prev = row.hash;
  }
}

/** Every row in chain order, read lazily (the log can be large). */
export function chainRows(db: Database): Iterable<AuditRow> {
  return db.query<AuditRow, []>("SELECT * FROM audit_events ORDER BY seq").iterate();
}

export type AuditFilter = { resourceId?: string; actorId?: string; action?: string; createdAfter?: string; createdBefore?: string };

/**
 * Rows naming a resource, by audit_event_resources (decision 112). The `+` keeps SQLite from
 * walking the tenant index for its order instead: a resource has few rows, a project millions.
 */
const NAMING = (ids: string) => `+project_id = ? AND +mode = ? AND seq IN (SELECT seq FROM audit_event_resources WHERE resource_id IN (${ids}))`;

/** The tenant's rows, newest first. */
export function listAuditRows<T>(db: Database, tenant: Tenant, filter: AuditFilter, page: PageRequest, present: (row: AuditRow) => T): Page<T> {
  const where = [filter.resourceId === undefined ? "project_id = ? AND mode = ?" : NAMING("?")];
  const params: SQLQueryBindings[] = [tenant.projectId, tenant.mode];
  const add = (condition: string, value: string | undefined) => {
    if (value === undefined) return;
    where.push(condition);
    params.push(value);
  };
  if (filter.resourceId !== undefined) params.push(filter.resourceId);
  add("actor_id = ?", filter.actorId);
  add("action = ?", filter.action);
  add("created_at >= ?", filter.createdAfter);
  add("created_at < ?", filter.createdBefore);
  return paginate<AuditRow, T>(db, { table: "audit_events", where, params }, page, present);
}

/** The tenant's rows naming any of `ids`, in chain order: an export's chain of custody. */
export function auditRowsAbout(db: Database, tenant: Tenant, ids: readonly string[]): AuditRow[] {
  return db
    .query<AuditRow, [string, string, string]>(`SELECT * FROM audit_events WHERE ${NAMING("SELECT value FROM json_each(?)")} ORDER BY seq`)
    .all(tenant.projectId, tenant.mode, JSON.stringify(ids));
}

/**
 * The first disagreement between the chained rows and the index of the ids they name: an
 * id a row names that the index lacks (an access hidden from the filter), or an entry no
 * row backs (one made up). Null when they agree.
 */
export function resourceIndexMismatch(db: Database): { seq: number; id: string; reason: string } | null {
  const missing = db
    .query<{ seq: number; id: string; resource_id: string }, []>(
      `SELECT e.seq, e.id, r.value AS resource_id FROM audit_events e, json_each(e.resource_ids) r
       WHERE NOT EXISTS (SELECT 1 FROM audit_event_resources x WHERE x.resource_id = r.value AND x.seq = e.seq) ORDER BY e.seq LIMIT 1`,
    )
    .get();
  if (missing)
    return { seq: missing.seq, id: missing.id, reason: `the resource index lacks its ${missing.resource_id} (the row is hidden from the resource filter)` };
  const extra = db
    .query<{ seq: number; id: string; resource_id: string }, []>(
      `SELECT x.seq, coalesce(row.id, '(no such row)') AS id, x.resource_id FROM audit_event_resources x LEFT JOIN audit_events row ON row.seq = x.seq
       WHERE NOT EXISTS (SELECT 1 FROM audit_events e, json_each(e.resource_ids) r WHERE e.seq = x.seq AND r.value = x.resource_id) ORDER BY x.seq LIMIT 1`,
    )
    .get();
  return extra && { seq: extra.seq, id: extra.id, reason: `the resource index names ${extra.resource_id} for it, which the row does not` };
}

/** The newest row's position and hash: what an operator anchors, and what an export's custody record quotes. */
export function chainHead(db: Database): { sequence: number; hash: string } | null {
  const head = db.query<{ seq: number; hash: string }, []>("SELECT seq, hash FROM audit_events ORDER BY seq DESC LIMIT 1").get();
  return head ? { sequence: head.seq, hash: head.hash } : null;
}
