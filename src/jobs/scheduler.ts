import { Cron } from "croner";
import type { Logger } from "../log";

/** A piece of periodic work (command expiry, offline checks, purges ...) that a module contributes. */
export type PeriodicTask = { name: string /** croner pattern, seconds field first */; pattern: string; run: () => Promise<void> | void };

/**
 * The one place periodic work is timed (the only croner import). Tasks never overlap
 * themselves, and a failing task is logged, not fatal.
 */
export function startScheduler(tasks: readonly PeriodicTask[], log: Logger): { stop(): void } {
  const crons = tasks.map(
    (task) =>
      new Cron(
        task.pattern,
        { name: task.name, protect: true, catch: (err: unknown) => log.error("periodic task failed", { task: task.name, error: String(err) }) },
        async () => {
          await task.run();
        },
      ),
  );
  return { stop: () => crons.forEach((c) => c.stop()) };
}
