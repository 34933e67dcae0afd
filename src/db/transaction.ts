import type { Database } from "bun:sqlite";

/**
 * A transaction function built once per connection, for the hot paths. bun:sqlite's
 * `db.transaction(fn)` builds four wrapper functions and defines their properties on
 * every call: measured at ~5% of a heartbeat. `body` receives the connection first, then
 * the caller's arguments; it runs inside BEGIN ... COMMIT (ROLLBACK when it throws).
 */
export function transactionOnce<A extends unknown[], R>(body: (db: Database, ...args: A) => R): (db: Database, ...args: A) => R {
  const built = new WeakMap<Database, (...args: A) => R>();
  return (db, ...args) => {
    let run = built.get(db);
    if (!run) {
      run = db.transaction((...inner: A) => body(db, ...inner));
      built.set(db, run);
    }
    return run(...args);
  };
}
