import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { ManualClock } from "../../src/clock";
import { openDatabase } from "../../src/db/open";
import { migrate } from "../../src/db/migrate";
import { JobQueue, PermanentJobError, RetryJobError } from "../../src/jobs/queue";
import { createLogger } from "../../src/log";
import { makeTempDir, waitFor } from "../helpers";

/** The queue itself is tested with made-up job names: any name, any payload. */
type AnyJobs = Record<string, any>;

function setup() {
  const path = join(makeTempDir(), "q.db");
  const db = openDatabase(path);
  migrate(db);
  const clock = new ManualClock();
  const queue = new JobQueue<AnyJobs>(db, clock, createLogger("silent"));
  const state = (id: string) => db.query("SELECT state, attempts, last_error, run_at FROM jobs WHERE id = ?").get(id) as any;
  return { path, db, clock, queue, state };
}

describe("durable job queue", () => {
  test("runs a job once and marks it done", async () => {
    const { queue, state } = setup();
    const seen: unknown[] = [];
    queue.register("echo", (job) => void seen.push(job.payload));
    const id = queue.enqueue("echo", { n: 1 })!;
    expect(await queue.drain()).toBe(1);
    expect(seen).toEqual([{ n: 1 }]);
    expect(state(id)).toMatchObject({ state: "done", attempts: 1 });
    expect(await queue.drain()).toBe(0);
  });

  test("a failure is retried with backoff, then the job is dead after max attempts", async () => {
    const { queue, clock, state } = setup();
    let calls = 0;
    queue.register("flaky", () => {
      calls++;
      throw new Error("boom");
    });
    const id = queue.enqueue("flaky", {}, { maxAttempts: 3 })!;
    await queue.drain();
    expect(state(id)).toMatchObject({ state: "queued", attempts: 1, last_error: "boom" });
    expect(await queue.drain()).toBe(0); // not due yet
    clock.advance(10 * 60_000);
    await queue.drain();
    clock.advance(10 * 60_000);
    await queue.drain();
    expect(calls).toBe(3);
    expect(state(id)).toMatchObject({ state: "dead", attempts: 3 });
  });

  test("a job that fails on a full disk waits and is retried without using up its attempts", async () => {
    const { queue, clock, state } = setup();
    let full = true;
    let calls = 0;
    queue.register("writes", () => {
      calls++;
      if (full) throw Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
    });
    const id = queue.enqueue("writes", {}, { maxAttempts: 2 })!;
    for (let i = 0; i < 5; i++) {
      await queue.drain();
      expect(state(id)).toMatchObject({ state: "queued", attempts: 0 });
      clock.advance(30_000);
    }
    full = false;
    await queue.drain();
    expect(state(id)).toMatchObject({ state: "done", attempts: 1 });
    expect(calls).toBe(6);
  });

  test("RetryJobError picks the delay; PermanentJobError kills at once", async () => {
    const { queue, clock, state } = setup();
    queue.register("later", () => {
      throw new RetryJobError("not yet", 5000);
    });
    queue.register("never", () => {
      throw new PermanentJobError("cannot");
    });
    const later = queue.enqueue("later", {})!;
    const never = queue.enqueue("never", {})!;
    await queue.drain();
    expect(state(later).run_at).toBe(new Date(clock.now().getTime() + 5000).toISOString());
    expect(state(never)).toMatchObject({ state: "dead", attempts: 1 });
  });

  test("runAt delays a job; a dedupe key allows one unfinished job", async () => {
    const { queue, clock } = setup();
    queue.register("x", () => {});
    expect(queue.enqueue("x", {}, { runAt: new Date(clock.now().getTime() + 60_000), dedupeKey: "k" })).not.toBeNull();
    expect(queue.enqueue("x", {}, { dedupeKey: "k" })).toBeNull();
    expect(await queue.drain()).toBe(0);
    clock.advance(60_000);
    expect(await queue.drain()).toBe(1);
    expect(queue.enqueue("x", {}, { dedupeKey: "k" })).not.toBeNull();
  });

  test("a job leased by a worker that was killed -9 is run again after restart", async () => {
    const { path, db, state } = setup();
    const id = new JobQueue<AnyJobs>(db, new ManualClock(new Date()), createLogger("silent")).enqueue("slow", { file: "a" })!;
    const child = Bun.spawn([process.execPath, join(import.meta.dir, "support", "leasing-worker.ts"), path], { stdout: "pipe", stderr: "inherit" });
    const reader = child.stdout.getReader();
    const { value } = await reader.read();
    expect(new TextDecoder().decode(value)).toContain("leased");
    expect(state(id)).toMatchObject({ state: "running", attempts: 1 });
    child.kill(9);
    await child.exited;

    // The restarted appliance takes back the orphaned job at start and finishes it.
    const restarted = new JobQueue<AnyJobs>(db, new ManualClock(new Date()), createLogger("silent"));
    const done: unknown[] = [];
    restarted.register("slow", (job) => void done.push(job.payload));
    restarted.start();
    await restarted.stop();
    expect(await restarted.drain()).toBe(1);
    expect(done).toEqual([{ file: "a" }]);
    expect(state(id)).toMatchObject({ state: "done", attempts: 2 });
  });

  test("an expired lease is taken over even without a restart", async () => {
    const { db, clock, state } = setup();
    const a = new JobQueue<AnyJobs>(db, clock, createLogger("silent"));
    const id = a.enqueue("t", {})!;
    // Lease it by hand as a worker that then vanished.
    db.query("UPDATE jobs SET state = 'running', attempts = 1, leased_by = 'wrk_gone', lease_until = ? WHERE id = ?").run(
      new Date(clock.now().getTime() + 60_000).toISOString(),
      id,
    );
    a.register("t", () => {});
    expect(await a.drain()).toBe(0);
    clock.advance(60_001);
    expect(await a.drain()).toBe(1);
    expect(state(id)).toMatchObject({ state: "done", attempts: 2 });
  });

  test("a job whose worker died on its last attempt is dead once the lease expires, never run again", async () => {
    const { db, clock, queue, state } = setup();
    let runs = 0;
    queue.register("crashy", () => void runs++);
    const id = queue.enqueue("crashy", {}, { maxAttempts: 3 })!;
    // Its third attempt was leased by a worker that then crashed, as the first two did.
    db.query("UPDATE jobs SET state = 'running', attempts = 3, leased_by = 'wrk_gone', lease_until = ? WHERE id = ?").run(
      new Date(clock.now().getTime() + 60_000).toISOString(),
      id,
    );
    expect(await queue.drain()).toBe(0);
    expect(state(id).state).toBe("running");
    clock.advance(60_001);
    expect(await queue.drain()).toBe(0);
    expect(runs).toBe(0);
    expect(state(id)).toMatchObject({ state: "dead", attempts: 3 });
    expect(state(id).last_error).toContain("died on every attempt");
  });

  test("at start, an orphaned job on its last attempt is dead; one with attempts left is taken back", async () => {
    const { db, clock, state } = setup();
    const queue = new JobQueue<AnyJobs>(db, clock, createLogger("silent"));
    const spent = queue.enqueue("t", { n: 1 }, { maxAttempts: 2 })!;
    const fresh = queue.enqueue("t", { n: 2 }, { maxAttempts: 2 })!;
    const far = new Date(clock.now().getTime() + 60_000).toISOString();
    db.query("UPDATE jobs SET state = 'running', attempts = 2, leased_by = 'wrk_gone', lease_until = ? WHERE id = ?").run(far, spent);
    db.query("UPDATE jobs SET state = 'running', attempts = 1, leased_by = 'wrk_gone', lease_until = ? WHERE id = ?").run(far, fresh);
    const ran: unknown[] = [];
    queue.register("t", (job) => void ran.push(job.payload));
    queue.start();
    await queue.stop();
    await queue.drain();
    expect(state(spent)).toMatchObject({ state: "dead", attempts: 2 });
    expect(state(fresh)).toMatchObject({ state: "done", attempts: 2 });
    expect(ran).toEqual([{ n: 2 }]);
  });

  test("stop aborts running jobs: one that gives up goes back to the queue, its attempt not counted", async () => {
    const { db, state } = setup();
    const queue = new JobQueue<AnyJobs>(db, new ManualClock(new Date()), createLogger("silent"));
    const started = Promise.withResolvers<void>();
    queue.register(
      "transcribe",
      async (job) => {
        started.resolve();
        await new Promise((_, reject) => job.signal.addEventListener("abort", () => reject(job.signal.reason)));
      },
      { lane: "model" },
    );
    // One attempt only: were the interrupted one counted, the job could never run again.
    const id = queue.enqueue("transcribe", {}, { maxAttempts: 1 })!;
    queue.start();
    await started.promise;
    await queue.stop(10_000);
    expect(state(id)).toMatchObject({ state: "queued", attempts: 0, last_error: null });

    const restarted = new JobQueue<AnyJobs>(db, new ManualClock(new Date()), createLogger("silent"));
    restarted.register("transcribe", () => {}, { lane: "model" });
    expect(await restarted.drain()).toBe(1);
    expect(state(id)).toMatchObject({ state: "done", attempts: 1 });
  });

  test("a handler that ignores the abort is left behind at the deadline: its job is put back, its late end not recorded", async () => {
    const { db, state } = setup();
    const queue = new JobQueue<AnyJobs>(db, new ManualClock(new Date()), createLogger("silent"));
    const started = Promise.withResolvers<void>();
    const release = Promise.withResolvers<void>();
    queue.register(
      "stubborn",
      () => {
        started.resolve();
        return release.promise;
      },
      { lane: "model" },
    );
    const id = queue.enqueue("stubborn", {})!;
    queue.start();
    await started.promise;
    await queue.stop(50);
    expect(state(id)).toMatchObject({ state: "queued", attempts: 0 });
    release.resolve();
    await queue.stop(); // waits for the handler's end
    expect(state(id)).toMatchObject({ state: "queued", attempts: 0 });
  });

  test("quick io-lane jobs run while every model slot is busy", async () => {
    const { db } = setup();
    const queue = new JobQueue<AnyJobs>(db, new ManualClock(new Date()), createLogger("silent"), 2);
    let release = () => {};
    const blocked = new Promise<void>((r) => (release = r));
    let modelRunning = 0;
    queue.register(
      "transcribe",
      async () => {
        modelRunning++;
        await blocked;
      },
      { lane: "model" },
    );
    const quickDone = Promise.withResolvers<void>();
    queue.register("quick", () => quickDone.resolve());
    queue.enqueue("transcribe", { n: 1 });
    queue.enqueue("transcribe", { n: 2 });
    queue.enqueue("transcribe", { n: 3 });
    queue.start();
    await waitFor("both model slots taken", () => modelRunning === 2);
    queue.enqueue("quick", {});
    // Starved, it would never run: the test's timeout says so.
    await quickDone.promise;
    expect(modelRunning).toBe(2); // the third still waits for a model slot
    release();
    await queue.stop();
  });
});
