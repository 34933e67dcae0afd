import type { Database } from "bun:sqlite";

/**
 * Operator-wide counts for /v1/health and /metrics: read-only, across every project, and
 * never a row's content. The job counts ride the jobs_due index (by state); the deliveries'
 * count reads that table once, which the webhooks' purge keeps bounded.
 */

/** Whether the database answers a query at all. */
export function databaseAnswers(db: Database): boolean {
  try {
    return db.query<{ ok: number }, []>("SELECT 1 AS ok FROM schema_migrations LIMIT 1").get()?.ok === 1;
  } catch {
    return false;
  }
}

/** Jobs not yet done (queued, running) and dead ones, by type and state; done jobs are history, not load. */
export function countJobs(db: Database): { type: string; state: string; count: number }[] {
  return db
    .query<{ type: string; state: string; count: number }, []>(
      "SELECT type, state, count(*) AS count FROM jobs WHERE state IN ('queued', 'running', 'dead') GROUP BY type, state ORDER BY type, state",
    )
    .all();
}

/** When the oldest unfinished job was enqueued, or null when none waits. */
export function oldestUnfinishedJob(db: Database): string | null {
  return db.query<{ at: string | null }, []>("SELECT min(created_at) AS at FROM jobs WHERE state IN ('queued', 'running')").get()?.at ?? null;
}

/** Webhook deliveries by outcome: pending (being retried), succeeded, failed (gave up). */
export function countDeliveries(db: Database): { status: string; count: number }[] {
  return db.query<{ status: string; count: number }, []>("SELECT status, count(*) AS count FROM webhook_deliveries GROUP BY status ORDER BY status").all();
}
