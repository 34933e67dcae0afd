import { sha256Hex } from "../../crypto";

/** An audit_events row as stored: every column, the chain's two hashes included. */
export type AuditRow = {
  seq: number;
  id: string;
  created_at: string;
  project_id: string | null;
  mode: string | null;
  actor_type: string;
  actor_id: string | null;
  admin_email: string | null;
  device_id: string | null;
  action: string;
  /** JSON array of ids */
  resource_ids: string;
  request_id: string | null;
  client_address: string | null;
  prev_hash: string;
  /** The key, token or dashboard session that acted (decision 140); null on rows written before it. */
  credential_id: string | null;
  /** JSON array of Subject: whose content the row disclosed, and why; null when it disclosed none. */
  subjects: string | null;
  hash: string;
};

/** The predecessor of the first row. */
export const GENESIS_HASH = "0".repeat(64);

/** The columns a row's hash covers, in canonical order: every column but the hash itself. */
export const HASHED_COLUMNS = [
  "seq",
  "id",
  "created_at",
  "project_id",
  "mode",
  "actor_type",
  "actor_id",
  "admin_email",
  "device_id",
  "action",
  "resource_ids",
  "request_id",
  "client_address",
  "prev_hash",
] as const satisfies readonly (keyof AuditRow)[];

/**
 * Columns added by migration 0025 (decision 140), hashed after HASHED_COLUMNS only when one
 * is set: a row that has neither (every row written before them) keeps the form it was
 * hashed in, and clearing them on a row that had one changes its form, so that is caught.
 */
export const DISCLOSURE_COLUMNS = ["credential_id", "subjects"] as const satisfies readonly (keyof AuditRow)[];

/** One end user a row disclosed content of, and why: a break-glass reason (with its grant) or an export's matter. */
export type Subject = { end_user_id: string; reason: string | null; break_glass_id: string | null };

/**
 * A row's canonical form: HASHED_COLUMNS' values as a JSON array (so no separator inside a
 * value can make two rows read alike), then DISCLOSURE_COLUMNS' when either is set. Changing
 * it breaks every existing chain: it is part of the stored format (decision 102).
 */
export function canonicalForm(row: Omit<AuditRow, "hash">): string {
  const values: (string | number | null)[] = HASHED_COLUMNS.map((column) => row[column]);
  if (DISCLOSURE_COLUMNS.some((column) => row[column] != null)) values.push(...DISCLOSURE_COLUMNS.map((column) => row[column]));
  return JSON.stringify(values);
}

export function hashOf(row: Omit<AuditRow, "hash">): string {
  return sha256Hex(canonicalForm(row));
}

/** What verification found: the whole chain intact, or the first row that breaks it and how. */
export type ChainVerdict = { ok: true; rows: number; head: string } | { ok: false; rows: number; seq: number; id: string; reason: string };

/**
 * Walks the rows in chain order. A row is bad when its own hash does not match its content
 * (it was edited), or its prev_hash is not its predecessor's hash, or a sequence number is
 * missing before it (a row was removed or put in).
 */
export function verifyChain(rows: Iterable<AuditRow>): ChainVerdict {
  let previous: AuditRow | null = null;
  let count = 0;
  for (const row of rows) {
    count++;
    const bad = (reason: string): ChainVerdict => ({ ok: false, rows: count, seq: row.seq, id: row.id, reason });
    if (hashOf(row) !== row.hash) return bad("its content does not match its hash (the row was altered)");
    const expectedPrev = previous ? previous.hash : GENESIS_HASH;
    if (row.prev_hash !== expectedPrev)
      return bad(
        previous
          ? `its prev_hash is not the hash of row ${previous.seq} (a row before it was altered, removed or inserted)`
          : "the first row does not start from the genesis hash (rows before it were removed)",
      );
    if (previous && row.seq !== previous.seq + 1) return bad(`row ${previous.seq + 1} is missing`);
    previous = row;
  }
  return { ok: true, rows: count, head: previous?.hash ?? GENESIS_HASH };
}
