import type { Deps } from "./deps";
import { purgeOldEvents } from "./events/outbox";
import { purgeSpentTokens } from "./http/credentials";
import { purgeExpiredIdempotencyKeys } from "./http/idempotency";
import { purgeFinishedJobs } from "./jobs/queue";
import { registerWalTruncation } from "./jobs/truncate-wal";
import { registerPlaintextSealing } from "./jobs/seal-plaintext-audio";
import type { PeriodicTask } from "./jobs/scheduler";
import { registerDeviceRuntimeWork } from "./modules/heartbeats/background";
import { registerSummaryJobs } from "./modules/summaries/job";
import { registerTranscriptionJobs } from "./modules/transcriptions/job";
import { registerRecordingWork } from "./modules/recordings/background";
import { registerRetentionWork } from "./modules/retention/service";
import { registerExportJobs } from "./modules/exports/job";
import { registerSearchWork } from "./modules/search/indexer";
import { registerWebhookWork } from "./modules/webhooks/background";

/**
 * Registers every module's job handlers on deps.queue and returns every periodic task.
 * `serve` starts both; tests call it and drive the queue with drain().
 */
export function registerBackgroundWork(deps: Deps): PeriodicTask[] {
  const { db, clock } = deps;
  registerTranscriptionJobs(deps);
  registerSummaryJobs(deps);
  registerWalTruncation(deps);
  registerExportJobs(deps);
  const tasks: PeriodicTask[] = [
    { name: "purge-idempotency-keys", pattern: "0 */10 * * * *", run: () => void purgeExpiredIdempotencyKeys(db, clock.now()) },
    { name: "purge-spent-tokens", pattern: "0 17 * * * *", run: () => void purgeSpentTokens(deps, clock.now()) },
    { name: "purge-finished-jobs", pattern: "0 7 * * * *", run: () => void purgeFinishedJobs(db, clock.now()) },
    { name: "purge-old-events", pattern: "0 37 4 * * *", run: () => void purgeOldEvents(db, clock.now()) },
    ...registerRecordingWork(deps),
    ...registerSearchWork(deps),
    ...registerWebhookWork(deps),
    ...registerDeviceRuntimeWork(deps),
    ...registerRetentionWork(deps),
    ...registerPlaintextSealing(deps),
  ];
  return tasks;
}
