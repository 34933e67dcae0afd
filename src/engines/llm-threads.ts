import { readdir, readFile } from "node:fs/promises";
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
 * it and this process's runtime helpers (the threads named other than its main one: Bun's
 * garbage collector and JIT, busy for some milliseconds after a call and counted as a core (decision 228)
 * taken, which left a quiet box's answer on one thread of two), the median of a few reads;
 * elsewhere the 1-minute load average. Model threads (ggml's, whisper's) carry the main
 * thread's name and count as busy. Only between model calls, when this process's model
 * threads are idle, does it mean "the rest of the box".
 */
export async function busyElsewhere(path = "/proc/loadavg", self = "/proc/self"): Promise<number> {
  const counts: number[] = [];
  for (let i = 0; i < READS; i++) {
    const running = Number((await readFile(path, "utf8").catch(() => "")).split(" ")[3]?.split("/")[0]);
    if (!Number.isFinite(running)) return loadavg()[0]!;
    counts.push(running - 1 - (await runtimeHelpersRunning(self)));
    if (i < READS - 1) await Bun.sleep(READ_GAP_MS);
  }
  return counts.sort((a, b) => a - b)[Math.floor(READS / 2)]!;
}

/** This process's runnable threads named other than its main thread (0 where /proc cannot tell). */
async function runtimeHelpersRunning(self: string): Promise<number> {
  const main = await readFile(join(self, "comm"), "utf8").catch(() => null);
  const tasks = await readdir(join(self, "task")).catch(() => []);
  let helpers = 0;
  for (const tid of tasks) {
    const [comm, stat] = await Promise.all([readFile(join(self, "task", tid, "comm"), "utf8"), readFile(join(self, "task", tid, "stat"), "utf8")]).catch(() => [
      null,
      null,
    ]);
    // The state follows the name in parentheses: "tid (name) R ...".
    if (main !== null && comm !== null && comm !== main && stat?.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) === "R") helpers++;
  }
  return helpers;
}
