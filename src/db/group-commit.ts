import type { Database } from "bun:sqlite";

type Unit = { work: () => unknown; resolve: (value: unknown) => void; reject: (reason: unknown) => void };

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
 *
 * @example const commit = groupCommit(db); const row = await commit(() => writeRow(db, input));
 */
export function groupCommit(db: Database): <T>(work: () => T) => Promise<T> {
  let cached = committers.get(db);
  if (!cached) {
    cached = committer(db);
    committers.set(db, cached);
  }
  return cached as <T>(work: () => T) => Promise<T>;
}

const committers = new WeakMap<Database, (work: () => unknown) => Promise<unknown>>();

function committer(db: Database): (work: () => unknown) => Promise<unknown> {
  const begin = db.prepare("BEGIN");
  const commit = db.prepare("COMMIT");
  const rollback = db.prepare("ROLLBACK");
  const savepoint = db.prepare("SAVEPOINT unit");
  const release = db.prepare("RELEASE unit");
  const undo = db.prepare("ROLLBACK TO unit");
  let queued: Unit[] = [];

  function runUnit(unit: Unit): { ok: true; value: unknown } | { ok: false; error: unknown } {
    savepoint.run();
    try {
      const value = unit.work();
      release.run();
      return { ok: true, value };
    } catch (error) {
      // SQLite rolls the whole transaction back by itself on some errors (disk full, I/O): then the group fails.
      if (!db.inTransaction) throw error;
      undo.run();
      release.run();
      return { ok: false, error };
    }
  }

  function flush(): void {
    const group = queued;
    queued = [];
    let outcomes: ReturnType<typeof runUnit>[];
    try {
      begin.run();
      try {
        outcomes = group.map(runUnit);
        commit.run();
      } catch (error) {
        if (db.inTransaction) rollback.run();
        throw error;
      }
    } catch (error) {
      for (const unit of group) unit.reject(error);
      return;
    }
    group.forEach((unit, i) => {
      const outcome = outcomes[i]!;
      if (outcome.ok) unit.resolve(outcome.value);
      else unit.reject(outcome.error);
    });
  }

  return (work) =>
    new Promise((resolve, reject) => {
      if (queued.push({ work, resolve, reject }) === 1) setImmediate(flush);
    });
}
