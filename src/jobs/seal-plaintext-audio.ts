import type { Clock } from "../clock";
import type { Logger } from "../log";
import type { Storage } from "../storage";
import { EncryptedStorage } from "../storage/encryption/encrypted-storage";
import type { JobQueue } from "./queue";

/**
 * Job that seals, where they lie, the audio objects stored before encryption at rest
 * (decision 107), so an operator who upgrades has everything encrypted without running
 * anything. Enqueued at every start, due a minute later (once the start's own work, such as
 * resumed verifications and model loading, is under way); it walks the store in key order, in batches that end
 * well inside the queue's lease, each enqueueing the next from the last key it reached.
 * Sealed objects are skipped, so a crash or a stop loses nothing: the walk resumes.
 */
export const SEAL_PLAINTEXT_JOB = "storage.seal_plaintext";

const START_DELAY_MS = 60_000;
const BATCH_MS = 20_000;
/** Objects in use when their turn came (a download, a transcription) are tried again after this long. */
const BUSY_RETRY_MS = 60_000;

export function registerPlaintextSealing(deps: { queue: JobQueue; storage: Storage; clock: Clock; log: Logger }): void {
  const { queue, storage, clock, log } = deps;
  if (!(storage instanceof EncryptedStorage)) return;
  queue.register(SEAL_PLAINTEXT_JOB, async ({ payload, signal }) => {
    const started = performance.now();
    let sealed = 0;
    let retry = payload.retry;
    const report = () => sealed && log.info("sealed audio stored before encryption at rest", { objects: sealed });
    for await (const key of storage.list(payload.after)) {
      const outcome = await storage.sealInPlace(key);
      if (outcome === "sealed") sealed++;
      if (outcome === "busy") retry = true;
      if (signal.aborted || performance.now() - started > BATCH_MS) {
        queue.enqueue(SEAL_PLAINTEXT_JOB, { after: key, retry });
        return void report();
      }
    }
    report();
    if (retry) queue.enqueue(SEAL_PLAINTEXT_JOB, { after: null, retry: false }, { runAt: new Date(clock.now().getTime() + BUSY_RETRY_MS) });
  });
  const runAt = new Date(clock.now().getTime() + START_DELAY_MS);
  queue.enqueue(SEAL_PLAINTEXT_JOB, { after: null, retry: false }, { runAt, dedupeKey: `${SEAL_PLAINTEXT_JOB}:start` });
}
