import type { Clock } from "../clock";
import type { Logger } from "../log";
import type { Storage } from "../storage";
import { EncryptedStorage } from "../storage/encryption/encrypted-storage";
import type { JobQueue } from "./queue";

/**
 * Job that seals, where they lie, the audio objects stored before encryption at rest
 * (decision 107), so an operator who upgrades has everything encrypted without running
 * anything. Enqueued at every start, due a minute later (once the start's own work, such as
 * resumed verifications and model loading, is under way); it walks the store in key order,
 * in batches that end well inside the queue's lease, each enqueueing the next from the last
 * key it reached. Sealed objects are skipped, so a crash or a stop loses nothing: the walk
 * resumes. The payload carries, across batches, how many objects were in use at their turn
 * (a pass again a minute later) or failed (again an hour later: a full disk, an object of
 * no project).
 */
export const SEAL_PLAINTEXT_JOB = "storage.seal_plaintext";

const START_DELAY_MS = 60_000;
const BATCH_MS = 20_000;
const BUSY_RETRY_MS = 60_000;
const FAILED_RETRY_MS = 3_600_000;

export function registerPlaintextSealing(deps: { queue: JobQueue; storage: Storage; clock: Clock; log: Logger }): void {
  const { queue, storage, clock, log } = deps;
  if (!(storage instanceof EncryptedStorage)) return;
  const later = (ms: number) => new Date(clock.now().getTime() + ms);
  queue.register(SEAL_PLAINTEXT_JOB, async ({ payload, signal }) => {
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
    if (failed || busy) queue.enqueue(SEAL_PLAINTEXT_JOB, { after: null, busy: 0, failed: 0 }, { runAt: later(failed ? FAILED_RETRY_MS : BUSY_RETRY_MS) });
  });
  queue.enqueue(SEAL_PLAINTEXT_JOB, { after: null, busy: 0, failed: 0 }, { runAt: later(START_DELAY_MS), dedupeKey: `${SEAL_PLAINTEXT_JOB}:start` });
}
