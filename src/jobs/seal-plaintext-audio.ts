import type { Clock } from "../clock";
import type { Logger } from "../log";
import type { Storage } from "../storage";
import { EncryptedStorage } from "../storage/encryption/encrypted-storage";
import type { JobPayload } from "./contracts";
import type { Job, JobQueue } from "./queue";

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
export type PlaintextSealing = { job: (job: Job<JobPayload<typeof SEAL_PLAINTEXT_JOB>>) => Promise<void>; startPass: () => void };
type SealingDeps = { queue: JobQueue; storage: Storage; clock: Clock; log: Logger };

/** One per Deps: the job and the task share when the next pass may start. */
const sealings = new WeakMap<SealingDeps, PlaintextSealing>();

/** The handler and the starting task of this Deps; null where storage is not encrypted (nothing to seal). */
export function plaintextSealing(deps: SealingDeps): PlaintextSealing | null {
  if (!(deps.storage instanceof EncryptedStorage)) return null;
  let sealing = sealings.get(deps);
  if (!sealing) sealings.set(deps, (sealing = makeSealing(deps, deps.storage)));
  return sealing;
}

function makeSealing(deps: SealingDeps, storage: EncryptedStorage): PlaintextSealing {
  const { queue, clock, log } = deps;
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
  const job = async ({ payload, signal }: Job<JobPayload<typeof SEAL_PLAINTEXT_JOB>>) => {
    try {
      await runBatch(payload, signal);
    } catch (err) {
      nextPassAt = clock.now().getTime() + FAILED_RETRY_MS; // the store cannot be listed (S3 unreachable): the queue retries, and a new pass starts later
      throw err;
    }
  };
  const startPass = () => {
    if (clock.now().getTime() < nextPassAt) return;
    nextPassAt = Infinity;
    queue.enqueue(SEAL_PLAINTEXT_JOB, { after: null, busy: 0, failed: 0 });
  };
  return { job, startPass };
}
