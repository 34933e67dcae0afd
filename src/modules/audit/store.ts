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
 * The tenant's rows, newest first. A resource filter looks inside each row's id list: no
 * index of its own, so the hot path writes one row per access (decision 102).
 */
export function listAuditRows<T>(db: Database, tenant: Tenant, filter: AuditFilter, page: PageRequest, present: (row: AuditRow) => T): Page<T> {
  const where = ["project_id = ?", "mode = ?"];
  const params: SQLQueryBindings[] = [tenant.projectId, tenant.mode];
  const add = (condition: string, value: string | undefined) => {
    if (value === undefined) return;
    where.push(condition);
    params.push(value);
  };
  add("EXISTS (SELECT 1 FROM json_each(resource_ids) WHERE value = ?)", filter.resourceId);
  add("actor_id = ?", filter.actorId);
  add("action = ?", filter.action);
  add("created_at >= ?", filter.createdAfter);
  add("created_at < ?", filter.createdBefore);
  return paginate<AuditRow, T>(db, { table: "audit_events", where, params }, page, present);
}

/** The tenant's rows naming any of `ids`, in chain order: an export's chain of custody. */
export function auditRowsAbout(db: Database, tenant: Tenant, ids: readonly string[]): AuditRow[] {
  return db
    .query<AuditRow, [string, string, string]>(
      `SELECT * FROM audit_events WHERE project_id = ? AND mode = ?
       AND EXISTS (SELECT 1 FROM json_each(resource_ids) r WHERE r.value IN (SELECT value FROM json_each(?))) ORDER BY seq`,
    )
    .all(tenant.projectId, tenant.mode, JSON.stringify(ids));
}

/** The newest row's position and hash: what an operator anchors, and what an export's custody record quotes. */
export function chainHead(db: Database): { sequence: number; hash: string } | null {
  const head = db.query<{ seq: number; hash: string }, []>("SELECT seq, hash FROM audit_events ORDER BY seq DESC LIMIT 1").get();
  return head ? { sequence: head.seq, hash: head.hash } : null;
}
