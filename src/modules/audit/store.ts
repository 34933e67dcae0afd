import type { Database, SQLQueryBindings } from "bun:sqlite";
import type { Page, PageRequest } from "../../http/pagination";
import { paginate } from "../../http/pagination";
import type { Tenant } from "../../tenancy";
import { type AuditRow, DISCLOSURE_COLUMNS, GENESIS_HASH, HASHED_COLUMNS, hashOf } from "./chain";

/** What a new row says; the chain columns (seq, prev_hash, hash) are filled in by appendAuditRows. */
export type AuditFields = Omit<AuditRow, "seq" | "prev_hash" | "hash">;

const STORED_COLUMNS = [...HASHED_COLUMNS, ...DISCLOSURE_COLUMNS, "hash"] as const;
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

/**
 * The tenant's rows, newest first; with no tenant, the organization's own rows, which belong
 * to no project (sign-ins, accounts and roles, projects).
 */
export function listAuditRows<T>(db: Database, tenant: Tenant | null, filter: AuditFilter, page: PageRequest, present: (row: AuditRow) => T): Page<T> {
  const where = tenant ? [filter.resourceId === undefined ? "project_id = ? AND mode = ?" : NAMING("?")] : ["project_id IS NULL"];
  const params: SQLQueryBindings[] = tenant ? [tenant.projectId, tenant.mode] : [];
  if (!tenant && filter.resourceId !== undefined) where.push("seq IN (SELECT seq FROM audit_event_resources WHERE resource_id = ?)");
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
 * The two indexes derived from the chained rows (decisions 112 and 140): each as the JSON
 * array column it is built from, the path of the id in an element, and the id's column.
 */
const INDEXES = [
  { table: "audit_event_resources", source: "resource_ids", element: "r.value", column: "resource_id", names: "resource index" },
  { table: "audit_event_subjects", source: "subjects", element: "json_extract(r.value, '$.end_user_id')", column: "end_user_id", names: "subject index" },
] as const;

/**
 * The first disagreement between the chained rows and an index of the ids they name: an
 * id a row names that the index lacks (an access hidden from the filter), or an entry no
 * row backs (one made up). Null when they agree.
 */
export function indexMismatch(db: Database): { seq: number; id: string; reason: string } | null {
  for (const { table, source, element, column, names } of INDEXES) {
    const missing = db
      .query<{ seq: number; id: string; named: string }, []>(
        `SELECT e.seq, e.id, ${element} AS named FROM audit_events e, json_each(e.${source}) r
         WHERE NOT EXISTS (SELECT 1 FROM ${table} x WHERE x.${column} = ${element} AND x.seq = e.seq) ORDER BY e.seq LIMIT 1`,
      )
      .get();
    if (missing) return { seq: missing.seq, id: missing.id, reason: `the ${names} lacks its ${missing.named} (the row is hidden from lookups by it)` };
    const extra = db
      .query<{ seq: number; id: string; named: string }, []>(
        `SELECT x.seq, coalesce(row.id, '(no such row)') AS id, x.${column} AS named FROM ${table} x LEFT JOIN audit_events row ON row.seq = x.seq
         WHERE NOT EXISTS (SELECT 1 FROM audit_events e, json_each(e.${source}) r WHERE e.seq = x.seq AND ${element} = x.${column}) ORDER BY x.seq LIMIT 1`,
      )
      .get();
    if (extra) return { seq: extra.seq, id: extra.id, reason: `the ${names} names ${extra.named} for it, which the row does not` };
  }
  return null;
}

/** The tenant's rows that disclosed an end user's content, newest first (decision 140). */
export function listDisclosureRows<T>(db: Database, tenant: Tenant, endUserId: string, page: PageRequest, present: (row: AuditRow) => T): Page<T> {
  // The `+` as in NAMING: one person's rows are few, the project's many.
  const where = ["+project_id = ? AND +mode = ? AND seq IN (SELECT seq FROM audit_event_subjects WHERE end_user_id = ?)"];
  return paginate<AuditRow, T>(db, { table: "audit_events", where, params: [tenant.projectId, tenant.mode, endUserId] }, page, present);
}

/** The subjects of the row that created an export: what each download of it discloses. Null when there is none. */
export function subjectsOfExportRow(db: Database, tenant: Tenant, exportId: string): string | null {
  return (
    db
      .query<{ subjects: string | null }, [string, string, string]>(
        `SELECT subjects FROM audit_events WHERE ${NAMING("?")} AND action = 'export.create' ORDER BY seq LIMIT 1`,
      )
      .get(tenant.projectId, tenant.mode, exportId)?.subjects ?? null
  );
}

/** The newest row's position and hash: what an operator anchors, and what an export's custody record quotes. */
export function chainHead(db: Database): { sequence: number; hash: string } | null {
  const head = db.query<{ seq: number; hash: string }, []>("SELECT seq, hash FROM audit_events ORDER BY seq DESC LIMIT 1").get();
  return head ? { sequence: head.seq, hash: head.hash } : null;
}
