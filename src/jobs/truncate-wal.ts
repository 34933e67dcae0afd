import type { Wal } from "../db/checkpointer";
import { type JobQueue, RetryJobError } from "./queue";

/**
 * Job that empties the WAL file after an erasure commits: until then the WAL still holds
 * page images from before it, erased text among them (decision 078).
 */
export const TRUNCATE_WAL_JOB = "db.truncate_wal";

/** A reader or writer that keeps the WAL busy is waited out this long between tries. */
const RETRY_MS = 10_000;
/** Tries over a day: the job gives up only on a database that never has a quiet moment. */
const MAX_ATTEMPTS = 8_640;

/**
 * Call in the erasing transaction, so the job exists exactly when the erasure does. Not
 * deduplicated: a job already running may have truncated before this erasure committed.
 */
export function enqueueWalTruncation(queue: JobQueue): void {
  queue.enqueue(TRUNCATE_WAL_JOB, {}, { maxAttempts: MAX_ATTEMPTS });
}

/** The job's handler: retried while a reader or writer keeps the WAL busy. */
export function truncateWal(deps: { wal: Wal }) {
  return async () => {
    if (!(await deps.wal.truncate())) throw new RetryJobError("a reader or writer kept the WAL busy; trying again", RETRY_MS);
  };
}
