import { readdirSync, readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";

/** Reads of the kernel's count a decision takes the median of: one read catches a burst. */
const READS = 5;
const READ_GAP_MS = 10;

/**
 * The threads a model call gets: the cores the rest of the box leaves free, at least one,
 * at most `most` (what the context was made with). ggml's threads wait for each other at
 * every operation, spinning: with a core taken by another process, two threads on two cores
 * make a token several times slower than one thread (decision 214).
 */
export function threadsFor(most: number, cores: number, busyElsewhere: number): number {
  return Math.max(1, Math.min(most, Math.round(cores - busyElsewhere)));
}

/**
 * How many threads other than the caller are runnable now, in cores: on Linux the kernel's
 * instant count (the fourth field of /proc/loadavg, "running/total"), less the thread reading
 * it and this process's runtime helpers (decision 228: the threads named other than its main
 * one, Bun's garbage collector and JIT, busy for some milliseconds after a call, which were
 * counted as a core taken and left a quiet box's answer on one thread of two), the median of a
 * few reads; elsewhere the 1-minute load average. Model threads (ggml's, whisper's) carry the
 * main thread's name and count as busy. Only between model calls, when this process's model
 * threads are idle, does it mean "the rest of the box".
 */
export async function busyElsewhere(path = "/proc/loadavg", self = "/proc/self"): Promise<number> {
  const main = nameAndState(readOr(join(self, "stat")))?.name ?? null;
  const counts: number[] = [];
  for (let i = 0; i < READS; i++) {
    // Read on this thread (synchronously, a few microseconds): an asynchronous read would run on
    // one of Bun's pool threads, itself runnable and named other than the main thread.
    const running = Number(readOr(path).split(" ")[3]?.split("/")[0]);
    if (!Number.isFinite(running)) return loadavg()[0]!;
    counts.push(running - 1 - (main === null ? 0 : helpersRunning(self, main)));
    if (i < READS - 1) await Bun.sleep(READ_GAP_MS);
  }
  return counts.sort((a, b) => a - b)[Math.floor(READS / 2)]!;
}

/** A thread's name and state from its stat line, "tid (name) R ..." (the name may hold spaces and parentheses). */
function nameAndState(stat: string): { name: string; state: string } | null {
  const close = stat.lastIndexOf(")");
  return close < 0 ? null : { name: stat.slice(stat.indexOf("(") + 1, close), state: stat[close + 2] ?? "" };
}

/** A file's text, or "" when it cannot be read (no /proc here, a thread that ended). */
function readOr(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return "";
  }
}

/** This process's runnable threads named other than `main` (its stat was read: `self` is a /proc process dir). */
function helpersRunning(self: string, main: string): number {
  let helpers = 0;
  for (const tid of readdirSync(join(self, "task"))) {
    const thread = nameAndState(readOr(join(self, "task", tid, "stat")));
    if (thread && thread.state === "R" && thread.name !== main) helpers++;
  }
  return helpers;
}
