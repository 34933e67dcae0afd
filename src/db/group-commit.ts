import type { Database, Statement } from "bun:sqlite";

type Unit = { work: () => unknown; resolve: (value: unknown) => void; reject: (reason: unknown) => void };
type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/**
 * Group commit for the hot paths: synchronous units of work submitted during one turn of
 * the event loop run together in one transaction, each in a savepoint of its own. A burst
 * of N heartbeats or state polls then pays once, not N times, for what a transaction costs
 * beyond its pages: the file and WAL read-mark locks, their syscalls, the commit. Reads
 * ride along for that alone. Decision 076 has the figures.
 *
 * - A unit that throws is rolled back alone and its caller gets the error; the others go on.
 * - A BEGIN or COMMIT that fails (another process holding the write lock past busy_timeout)
 *   fails every unit of its group, and none of their writes stays.
 * - A caller's promise settles only after the commit, so no response announces a write that
 *   could still be lost.
 * - While paused (the WAL checkpointer catching up, decision 008), units wait in memory.
 *
 * One per connection, built with Deps (boot.ts): a second committer on the same connection
 * would open its transaction inside the first one's.
 *
 * @example const row = await deps.groupCommit.run(() => writeRow(deps.db, input));
 */
export class GroupCommitter {
  private queued: Unit[] = [];
  private paused = false;
  private readonly statements: Record<"begin" | "commit" | "rollback" | "savepoint" | "release" | "undo", Statement>;

  constructor(private readonly db: Database) {
    this.statements = {
      // The write lock first, as every transaction here (decision 116): a group that read before
      // its first write would fail at once if another connection committed in between.
      begin: db.prepare("BEGIN IMMEDIATE"),
      commit: db.prepare("COMMIT"),
      rollback: db.prepare("ROLLBACK"),
      savepoint: db.prepare("SAVEPOINT unit"),
      release: db.prepare("RELEASE unit"),
      undo: db.prepare("ROLLBACK TO unit"),
    };
  }

  /** Runs `work` in the next group's transaction; settles once that transaction has committed. */
  run<T>(work: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (this.queued.push({ work, resolve: resolve as (value: unknown) => void, reject }) === 1 && !this.paused) setImmediate(this.flush);
    });
  }

  /** Holds every unit until `resume`; units already flushed have committed. */
  pause(): void {
    this.paused = true;
  }

  resume(): void {
    if (!this.paused) return;
    this.paused = false;
    if (this.queued.length > 0) setImmediate(this.flush);
  }

  private readonly flush = (): void => {
    // A flush scheduled before a pause, or a second one scheduled by resume, finds nothing to do.
    if (this.paused || this.queued.length === 0) return;
    const units = this.queued;
    this.queued = [];
    const { begin, commit, rollback } = this.statements;
    let outcomes: Outcome[];
    try {
      begin.run();
      try {
        outcomes = units.map((unit) => this.runUnit(unit));
        commit.run();
      } catch (error) {
        if (this.db.inTransaction) rollback.run();
        throw error;
      }
    } catch (error) {
      for (const unit of units) unit.reject(error);
      return;
    }
    units.forEach((unit, i) => {
      const outcome = outcomes[i]!;
      if (outcome.ok) unit.resolve(outcome.value);
      else unit.reject(outcome.error);
    });
  };

  private runUnit(unit: Unit): Outcome {
    const { savepoint, release, undo } = this.statements;
    savepoint.run();
    try {
      const value = unit.work();
      release.run();
      return { ok: true, value };
    } catch (error) {
      // SQLite rolls the whole transaction back by itself on some errors (disk full, I/O): then the group fails.
      if (!this.db.inTransaction) throw error;
      undo.run();
      release.run();
      return { ok: false, error };
    }
  }
}
