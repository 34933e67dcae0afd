import type { Database } from "bun:sqlite";

/** A job as the System page lists it: what it works on, never its content. */
export type JobLine = {
  id: string;
  type: string;
  state: string;
  attempts: number;
  max_attempts: number;
  payload: string;
  last_error: string | null;
  run_at: string;
  created_at: string;
  updated_at: string;
};

const COLUMNS = "id, type, state, attempts, max_attempts, payload, last_error, run_at, created_at, updated_at";

/** Queued and running jobs, oldest first. */
export function jobsInFlight(db: Database, limit: number): JobLine[] {
  return db.query<JobLine, [number]>(`SELECT ${COLUMNS} FROM jobs WHERE state IN ('queued', 'running') ORDER BY created_at, id LIMIT ?`).all(limit);
}

/** Jobs that gave up (dead), latest first, with the error that ended them. */
export function failedJobs(db: Database, limit: number): JobLine[] {
  return db.query<JobLine, [number]>(`SELECT ${COLUMNS} FROM jobs WHERE state = 'dead' ORDER BY updated_at DESC, id DESC LIMIT ?`).all(limit);
}

/**
 * Recordings whose processing failed, across every project: how many, and the latest one's
 * error (JSON {code, message}). Read once per System page visit, not polled: no index serves it.
 */
export function failedRecordings(db: Database): { count: number; latest: string | null } {
  return db
    .query<{ count: number; latest: string | null }, []>(
      "SELECT count(*) AS count, (SELECT error FROM recordings WHERE status = 'failed' ORDER BY updated_at DESC LIMIT 1) AS latest FROM recordings WHERE status = 'failed'",
    )
    .get()!;
}
