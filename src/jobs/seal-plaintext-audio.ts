import type { Clock } from "../clock";
import type { Logger } from "../log";
import type { Storage } from "../storage";
import { EncryptedStorage } from "../storage/encryption/encrypted-storage";
import type { JobPayload } from "./contracts";
import type { JobQueue } from "./queue";
import type { PeriodicTask } from "./scheduler";

/**
 * Job that seals, where they lie, the audio objects stored before encryption at rest
 * (decision 107), so an operator who upgrades has everything encrypted without running
 * anything. A pass walks the store in key order, in batches that end well inside the
 * queue's lease, each enqueueing the next from the last key it reached. Sealed objects are
 * skipped, so a crash or a stop loses nothing: the walk resumes.
 */
export const SEAL_PLAINTEXT_JOB = "storage.seal_plaintext";

const BATCH_MS = 20_000;
/** Objects that failed (a full disk, an object of no project) are tried again after this long; objects in use at their turn, at the next tick. */
const FAILED_RETRY_MS = 3_600_000;

/**
 * The job's handler, and a task that starts a pass within five minutes of the start and
 * then only while the last pass left something plaintext: nothing new is ever written in
 * plaintext, so once a pass is clean there is nothing to look for until the next start (an
 * upgrade or a restore is one). The payload carries, across batches, how many objects were
 * in use at their turn or failed.
 */
export function registerPlaintextSealing(deps: { queue: JobQueue; storage: Storage; clock: Clock; log: Logger }): PeriodicTask[] {
  const { queue, storage, clock, log } = deps;
  if (!(storage instanceof EncryptedStorage)) return [];
  let nextPassAt = 0; // epoch ms; Infinity while a pass runs, or after a clean one
  const runBatch = async (payload: JobPayload<typeof SEAL_PLAINTEXT_JOB>, signal: AbortSignal) => {
    const started = performance.now();
    let { busy, failed } = payload;
    let sealed = 0;
    const report = () => sealed && log.info("sealed audio stored before encryption at rest", { objects: sealed });
    for await (const key of storage.list(payload.after)) {
      try {
        const outcome = await storage.sealInPlace(key);
        if (outcome === "sealed") sealed++;
        if (outcome === "busy") busy++;
      } catch (err) {
        failed++;
        log.warn("could not seal an audio object stored before encryption at rest; it stays readable as it is", { key, error: String(err) });
      }
      if (signal.aborted || performance.now() - started > BATCH_MS) {
        queue.enqueue(SEAL_PLAINTEXT_JOB, { after: key, busy, failed });
        return void report();
      }
    }
    report();
    nextPassAt = failed ? clock.now().getTime() + FAILED_RETRY_MS : busy ? 0 : Infinity;
  };
  queue.register(SEAL_PLAINTEXT_JOB, async (job) => {
    try {
      await runBatch(job.payload, job.signal);
    } catch (err) {
      nextPassAt = clock.now().getTime() + FAILED_RETRY_MS; // the store cannot be listed (S3 unreachable): the queue retries, and a new pass starts later
      throw err;
    }
  });
  const startPass = () => {
    if (clock.now().getTime() < nextPassAt) return;
    nextPassAt = Infinity;
    queue.enqueue(SEAL_PLAINTEXT_JOB, { after: null, busy: 0, failed: 0 });
  };
  return [{ name: "seal-plaintext-audio", pattern: "0 */5 * * * *", run: startPass }];
}
