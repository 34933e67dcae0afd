import type { Database } from "bun:sqlite";
import type { Clock } from "../clock";
import type { JobContracts } from "./contracts";
import { settledWithin } from "../deadline";
import { newId } from "../ids";
import type { Logger } from "../log";
import { isOutOfSpace } from "../storage/volumes";

/** Thrown by a handler to be retried at a chosen delay instead of the default backoff. */
export class RetryJobError extends Error {
  constructor(
    message: string,
    readonly delayMs: number,
  ) {
    super(message);
  }
}
/** Thrown by a handler whose job can never succeed: it goes straight to the dead state. */
export class PermanentJobError extends Error {}

export type Job<P = unknown> = {
  id: string;
  type: string;
  payload: P;
  attempts: number;
  maxAttempts: number;
  /**
   * Aborts when the queue stops (the server shutting down). A handler that gives up then
   * must throw, not record a failure: the queue puts the job back for the next start.
   */
  signal: AbortSignal;
};
export type JobHandler<P = unknown> = (job: Job<P>) => Promise<void> | void;

export type EnqueueOptions = { runAt?: Date; dedupeKey?: string; maxAttempts?: number };

/**
 * Jobs that run a model (transcription, summaries, embedding) take minutes and the CPU
 * or GPU; everything else (verifying an upload, starting a transcription, deleting
 * bytes) takes milliseconds. Each lane has its own slots, so a quick job never waits
 * behind a long one.
 */
export type Lane = "model" | "io";
const IO_LANE_SLOTS = 4;

type JobRow = { id: string; type: string; payload: string; attempts: number; max_attempts: number };

const LEASE_MS = 60_000;
const POLL_MS = 250;
/** After the queue's own bookkeeping failed (a full disk), polling waits this long before trying again. */
const POLL_FAILED_MS = 5_000;
/** A job that failed on a full disk is retried after this long, without using up an attempt. */
const OUT_OF_SPACE_RETRY_MS = 30_000;

/** Backoff after a failed attempt: 2 s, 4 s, 8 s ... capped at 10 minutes, with jitter. */
function backoffMs(attempts: number): number {
  const base = Math.min(600_000, 1000 * 2 ** attempts);
  return base / 2 + Math.random() * (base / 2);
}

/**
 * The durable queue: jobs are rows, taken with a lease. A worker that dies leaves its
 * lease to expire (or, at start, orphaned jobs are taken back at once) so no job is
 * lost; handlers must therefore be idempotent. Failures retry with backoff until
 * max_attempts, then the job is dead and kept for inspection.
 */
export class JobQueue<Contracts extends object = JobContracts> {
  private handlers = new Map<string, { handler: JobHandler<any>; lane: Lane }>();
  private running: Record<Lane, number> = { model: 0, io: 0 };
  private slots: Record<Lane, number>;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private stopped = true;
  private inFlight = new Set<Promise<void>>();
  private leased = new Map<string, Job>();
  private shutdown = new AbortController();
  readonly workerId = newId("wrk_");

  constructor(
    private db: Database,
    private clock: Clock,
    private log: Logger,
    modelSlots = 2,
  ) {
    this.slots = { model: modelSlots, io: IO_LANE_SLOTS };
  }

  /** `Contracts` (src/jobs/contracts.ts) types the payload a handler receives. */
  register<N extends keyof Contracts & string>(type: N, handler: JobHandler<Contracts[N]>, options: { lane?: Lane } = {}): void {
    this.handlers.set(type, { handler: handler as JobHandler<any>, lane: options.lane ?? "io" });
  }

  /** Whether a handler is registered for `type` (a job nobody handles goes dead when taken). */
  handles(type: string): boolean {
    return this.handlers.has(type);
  }

  /** Adds a job (a no-op returning null when an unfinished job has the same dedupe key). */
  enqueue<N extends keyof Contracts & string>(type: N, payload: Contracts[N], options: EnqueueOptions = {}): string | null {
    const now = this.clock.now();
    const id = newId("job_", now.getTime());
    const inserted = this.db
      .query(
        `INSERT INTO jobs (id, type, payload, state, max_attempts, run_at, dedupe_key, created_at, updated_at)
         VALUES (?, ?, ?, 'queued', ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
      )
      .run(
        id,
        type,
        JSON.stringify(payload),
        options.maxAttempts ?? 5,
        (options.runAt ?? now).toISOString(),
        options.dedupeKey ?? null,
        now.toISOString(),
        now.toISOString(),
      ).changes;
    if (inserted) queueMicrotask(() => this.wake());
    return inserted ? id : null;
  }

  /**
   * Starts polling; jobs a previous process had leased are taken back at once, except those
   * that already used their last attempt (they died mid-run every time: dead, not retried).
   */
  start(): void {
    this.stopped = false;
    this.rearm();
    const now = this.clock.now().toISOString();
    try {
      this.buryCrashLoops("leased_by IS NOT ?", [this.workerId]);
      this.db
        .query("UPDATE jobs SET state = 'queued', lease_until = NULL, leased_by = NULL, updated_at = ? WHERE state = 'running' AND leased_by IS NOT ?")
        .run(now, this.workerId);
    } catch (err) {
      // A full disk must not stop the server starting: orphans are then taken back when their leases expire.
      this.log.warn("orphaned jobs not taken back at start", { error: err instanceof Error ? err.message : String(err) });
    }
    this.schedule(0);
  }

  /**
   * A running job whose worker vanished (lease expired, or orphaned at start) after its last
   * attempt is dead: taking it back would run, and crash, forever. Handlers need no check.
   */
  private buryCrashLoops(where: string, params: string[]): void {
    const now = this.clock.now().toISOString();
    const error = "the worker died on every attempt (crashed or was stopped mid-run)";
    const dead = this.db
      .query<{ id: string; type: string; attempts: number }, string[]>(
        `UPDATE jobs SET state = 'dead', last_error = ?, lease_until = NULL, leased_by = NULL, updated_at = ?
         WHERE state = 'running' AND attempts >= max_attempts AND ${where} RETURNING id, type, attempts`,
      )
      .all(error, now, ...params);
    for (const job of dead) this.log.warn("job failed", { job_id: job.id, type: job.type, attempt: job.attempts, dead: true, error });
  }

  /**
   * Stops taking jobs and aborts the running ones through job.signal: a model job gives up
   * and goes back to the queue, a quick one usually just finishes. Waits for them at most
   * `waitMs`; a handler still running then is left to the process exit, and its job is put
   * back the same way (handlers are idempotent, and its late result is not recorded).
   */
  async stop(waitMs = Number.POSITIVE_INFINITY): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.shutdown.abort(new Error("the server is stopping"));
    if (await settledWithin(Promise.all(this.inFlight), waitMs)) return;
    for (const job of this.leased.values()) this.putBack(job, "still running when the shutdown grace ran out");
  }

  /** A queue stopped and then started (or drained) again gives its new jobs a live signal. */
  private rearm(): void {
    if (this.shutdown.signal.aborted) this.shutdown = new AbortController();
  }

  /** Wakes the poller now (after an enqueue) instead of at the next tick. */
  wake(): void {
    if (!this.stopped) this.schedule(0);
  }

  /** Runs due jobs until none is left: for tests and the CLI, with no background polling. */
  async drain(maxJobs = 1000): Promise<number> {
    this.rearm();
    let ran = 0;
    for (let job = this.lease(); job && ran < maxJobs; job = this.lease()) {
      await this.execute(job);
      ran++;
    }
    return ran;
  }

  private schedule(delay: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => this.poll(), delay);
  }

  private poll(): void {
    if (this.stopped) return;
    try {
      this.leaseAndRun();
    } catch (err) {
      // The queue's own UPDATEs fail on a full disk: wait and poll again, never crash the process.
      this.log.warn("job queue could not poll; retrying", { error: err instanceof Error ? err.message : String(err), out_of_space: isOutOfSpace(err) });
      this.schedule(POLL_FAILED_MS);
      return;
    }
    this.schedule(POLL_MS);
  }

  private leaseAndRun(): void {
    const modelTypes = [...this.handlers].filter(([, h]) => h.lane === "model").map(([type]) => type);
    for (const lane of ["io", "model"] as const) {
      while (this.running[lane] < this.slots[lane]) {
        // Types nobody registered go to the io lane, where they fail fast as dead.
        const job = this.lease(modelTypes, lane === "model");
        if (!job) break;
        this.running[lane]++;
        const p = this.execute(job).finally(() => {
          this.running[lane]--;
          this.inFlight.delete(p);
          this.wake();
        });
        this.inFlight.add(p);
      }
    }
  }

  /** Takes the next due job; with `types`, only of those types (inside) or only of others (outside). */
  private lease(types?: string[], inside = true): Job | null {
    const now = this.clock.now();
    this.buryCrashLoops("lease_until <= ?", [now.toISOString()]);
    const filter = types ? `AND type ${inside ? "" : "NOT "}IN (SELECT value FROM json_each(?))` : "";
    const row = this.db
      .query<JobRow, string[]>(
        `UPDATE jobs SET state = 'running', attempts = attempts + 1, lease_until = ?, leased_by = ?, updated_at = ?
         WHERE id = (SELECT id FROM jobs WHERE ((state = 'queued' AND run_at <= ?) OR (state = 'running' AND lease_until <= ?)) ${filter}
                     ORDER BY run_at LIMIT 1)
         RETURNING id, type, payload, attempts, max_attempts`,
      )
      .get(
        new Date(now.getTime() + LEASE_MS).toISOString(),
        this.workerId,
        now.toISOString(),
        now.toISOString(),
        now.toISOString(),
        ...(types ? [JSON.stringify(types)] : []),
      );
    if (!row) return null;
    return {
      id: row.id,
      type: row.type,
      payload: JSON.parse(row.payload),
      attempts: row.attempts,
      maxAttempts: row.max_attempts,
      signal: this.shutdown.signal,
    };
  }

  private async execute(job: Job): Promise<void> {
    const handler = this.handlers.get(job.type)?.handler;
    // Long jobs (a transcription) keep their lease alive while they run.
    const renew = setInterval(() => {
      try {
        this.db
          .query("UPDATE jobs SET lease_until = ? WHERE id = ? AND leased_by = ?")
          .run(new Date(this.clock.now().getTime() + LEASE_MS).toISOString(), job.id, this.workerId);
      } catch (err) {
        // A lease that cannot be renewed (full disk) may expire: the job then runs again, which handlers allow.
        this.log.warn("job lease not renewed", { job_id: job.id, error: err instanceof Error ? err.message : String(err) });
      }
    }, LEASE_MS / 3);
    this.leased.set(job.id, job);
    try {
      if (!handler) throw new PermanentJobError(`no handler registered for job type ${job.type}`);
      await handler(job);
      this.finish(job, "done", null, null);
    } catch (err) {
      if (job.signal.aborted) return this.putBack(job, "it gave up at the abort");
      this.recordFailure(job, err);
    } finally {
      clearInterval(renew);
      this.leased.delete(job.id);
    }
  }

  /**
   * A job cut off by a shutdown goes back as if never taken: its attempt is not counted, so
   * restarting the server never moves a job towards dead, and it runs first at the next start.
   */
  private putBack(job: Job, why: string): void {
    try {
      const putBack = this.db
        .query("UPDATE jobs SET state = 'queued', attempts = attempts - 1, lease_until = NULL, leased_by = NULL, updated_at = ? WHERE id = ? AND leased_by = ?")
        .run(this.clock.now().toISOString(), job.id, this.workerId).changes;
      if (putBack) this.log.warn("job interrupted by shutdown; queued for the next start", { job_id: job.id, type: job.type, attempt: job.attempts, why });
    } catch (err) {
      // A full disk, say: the shutdown goes on. The job stays leased, and the next start
      // takes it back as an orphan (its attempt then counts).
      this.log.error("job interrupted by shutdown could not be queued again", { job_id: job.id, type: job.type, error: String(err) });
    }
  }

  /** A failed attempt: retried with backoff, dead after the last one; a full disk is waited out without using an attempt. */
  private recordFailure(job: Job, err: unknown): void {
    const message = err instanceof Error ? err.message : String(err);
    const now = this.clock.now().getTime();
    if (isOutOfSpace(err)) {
      this.log.warn("job waits for disk space", { job_id: job.id, type: job.type, error: message });
      this.finish(job, "queued", message, new Date(now + OUT_OF_SPACE_RETRY_MS), { refundAttempt: true });
      return;
    }
    const dead = err instanceof PermanentJobError || job.attempts >= job.maxAttempts;
    const delay = err instanceof RetryJobError ? err.delayMs : backoffMs(job.attempts);
    this.log.warn("job failed", { job_id: job.id, type: job.type, attempt: job.attempts, dead, error: message });
    this.finish(job, dead ? "dead" : "queued", message, dead ? null : new Date(now + delay));
  }

  /** Records the outcome; when even that fails (a full disk), the lease expires and the job runs again. */
  private finish(job: Job, state: "done" | "dead" | "queued", error: string | null, runAt: Date | null, options: { refundAttempt?: boolean } = {}): void {
    const now = this.clock.now().toISOString();
    try {
      this.db
        .query(
          `UPDATE jobs SET state = ?, last_error = ?, run_at = COALESCE(?, run_at), attempts = attempts - ?, lease_until = NULL, leased_by = NULL, updated_at = ?
           WHERE id = ? AND leased_by = ?`,
        )
        .run(state, error, runAt?.toISOString() ?? null, options.refundAttempt ? 1 : 0, now, job.id, this.workerId);
    } catch (err) {
      this.log.warn("job outcome not recorded; it runs again when its lease expires", {
        job_id: job.id,
        state,
        error: err instanceof Error ? err.message : String(err),
      });
    }
  }
}

const DAY_MS = 86_400_000;

/**
 * Scheduled purge: finished jobs after a week; dead jobs after 30 days, long enough for an
 * operator to read why they died, short enough that a job revived again and again (a
 * verification whose storage stays down) cannot grow the table without bound.
 */
export function purgeFinishedJobs(db: Database, now: Date): number {
  const before = (days: number) => new Date(now.getTime() - days * DAY_MS).toISOString();
  return db.query("DELETE FROM jobs WHERE (state = 'done' AND updated_at <= ?) OR (state = 'dead' AND updated_at <= ?)").run(before(7), before(30)).changes;
}
