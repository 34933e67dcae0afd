import { readFile } from "node:fs/promises";
import { loadavg } from "node:os";

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
 * it, the median of a few reads; elsewhere the 1-minute load average. Only between model
 * calls, when this process's model threads are idle, does it mean "the rest of the box".
 */
export async function busyElsewhere(path = "/proc/loadavg"): Promise<number> {
  const counts: number[] = [];
  for (let i = 0; i < READS; i++) {
    const running = Number((await readFile(path, "utf8").catch(() => "")).split(" ")[3]?.split("/")[0]);
    if (!Number.isFinite(running)) return loadavg()[0]!;
    counts.push(running - 1);
    if (i < READS - 1) await Bun.sleep(READ_GAP_MS);
  }
  return counts.sort((a, b) => a - b)[Math.floor(READS / 2)]!;
}
