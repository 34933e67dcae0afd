import type { Database } from "bun:sqlite";
import { newId } from "../../src/ids";
import { type AuditFields, appendAuditRows, listAuditRows } from "../../src/modules/audit/store";
import type { Tenant } from "../../src/tenancy";

/**
 * "Who accessed this recording" on a large audit log: GET /v1/audit-events?resource_id=
 * as the store answers it (a page of 50 and the total), through the index of the ids rows
 * name (decision 112), against the query it replaced, which looked inside every row of the
 * project (json_each), on the same database in the same run.
 */

/** The query before decision 112: the same page and total, by a scan of the project's rows. */
function scanned(db: Database, tenant: Tenant, resourceId: string) {
  const where = "project_id = ? AND mode = ? AND EXISTS (SELECT 1 FROM json_each(resource_ids) WHERE value = ?)";
  const params = [tenant.projectId, tenant.mode, resourceId] as const;
  db.query(`SELECT COUNT(*) AS n FROM audit_events WHERE ${where}`).get(...params);
  return db.query(`SELECT * FROM audit_events WHERE ${where} ORDER BY created_at DESC, id DESC LIMIT 51`).all(...params);
}

/** `rows` reads of 20,000 recordings, every fifth a search result naming 8 chunks as well; written through the real chain. */
export function fillAuditLog(db: Database, tenant: Tenant, rows: number): void {
  const start = Date.parse("2020-01-01T00:00:00Z");
  for (let done = 0; done < rows; ) {
    const batch: AuditFields[] = [];
    for (let i = 0; i < 10_000 && done < rows; i++, done++) {
      const recording = `rec_${done % 20_000}`;
      const ids = done % 5 === 0 ? [recording, ...Array.from({ length: 8 }, (_, j) => `chk_${done}_${j}`)] : [recording];
      batch.push({
        id: newId("aud_"),
        created_at: new Date(start + done * 60_000).toISOString(),
        project_id: tenant.projectId,
        mode: tenant.mode,
        actor_type: "api_key",
        actor_id: "key_bench",
        admin_email: null,
        device_id: null,
        action: "recording.audio.read",
        resource_ids: JSON.stringify(ids),
        request_id: null,
        client_address: "127.0.0.1",
        credential_id: "key_bench",
        subjects: null,
      });
    }
    db.transaction(() => appendAuditRows(db, batch))();
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

function time(fn: () => unknown, repetitions: number): number {
  const ms: number[] = [];
  for (let i = 0; i < repetitions; i++) {
    const t0 = performance.now();
    fn();
    ms.push(performance.now() - t0);
  }
  return median(ms);
}

/** Median ms of each way for a recording read 50 times, one chunk named once, and an id no row names. */
export function auditFilterTimes(db: Database, tenant: Tenant, repetitions = 5) {
  const cases = { "a recording (50 reads)": "rec_4242", "a chunk (1 read)": "chk_500_3", "an id never read": "rec_none" };
  return Object.entries(cases).map(([name, id]) => ({
    name,
    indexed: time(() => listAuditRows(db, tenant, { resourceId: id }, { limit: 50 }, (row) => row), repetitions),
    scanned: time(() => scanned(db, tenant, id), repetitions),
  }));
}
