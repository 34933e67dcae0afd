import type { Deps } from "./deps";
import { purgeOldEvents } from "./events/outbox";
import { purgeSpentTokens } from "./http/credentials";
import { purgeExpiredIdempotencyKeys } from "./http/idempotency";
import type { JobName, JobPayload } from "./jobs/contracts";
import { type JobHandler, type Lane, purgeFinishedJobs } from "./jobs/queue";
import type { PeriodicTask } from "./jobs/scheduler";
import { plaintextSealing } from "./jobs/seal-plaintext-audio";
import { truncateWal } from "./jobs/truncate-wal";
import { expireCommands } from "./modules/commands/runtime";
import { buildExport } from "./modules/exports/job";
import { reportOfflineDevices } from "./modules/heartbeats/service";
import { resumePendingVerifications, sweepPartialUploads } from "./modules/recordings/background";
import { deleteObjects } from "./modules/recordings/objects";
import { verifyUploadJob } from "./modules/recordings/upload-verify";
import { liveChunkReceived, liveTranscribe, liveVerificationFailed } from "./modules/live/job";
import { reusableLiveWork } from "./modules/live/service";
import { runRetention } from "./modules/retention/service";
import { buildCellsJob, checkSearchIndex, indexTranscriptionJob, reindexJob } from "./modules/search/indexer";
import { autoSummarize, runSummary } from "./modules/summaries/job";
import { autoTranscribe, runTranscription } from "./modules/transcriptions/job";
import { runRedactionPass } from "./modules/transcriptions/redaction-pass";
import { dispatchWebhooks, purgeDeliveries, wakeOnEvents } from "./modules/webhooks/background";

/**
 * All background work, in one table (decision 134): each job (what enqueues it, the lane it
 * runs in) and each periodic task (its croner schedule, seconds first), with the file its
 * handler lives in. A handler is built from Deps; null means "not on this appliance" (no
 * encryption at rest, nothing to seal). Building the table has no side effect.
 */
type JobEntry = { job: JobName; trigger: string; lane: Lane; file: string; handler: (deps: Deps) => JobHandler<never> | null };
type TaskEntry = { task: string; schedule: string; file: string; run: (deps: Deps) => (() => Promise<void> | void) | null };

/** A job entry, its handler typed by the job's payload (src/jobs/contracts.ts). */
const job = <N extends JobName>(
  name: N,
  e: { trigger: string; lane: Lane; file: string; handler: (deps: Deps) => JobHandler<JobPayload<N>> | null },
): JobEntry => ({
  job: name,
  ...e,
  handler: e.handler as JobEntry["handler"],
});

export const BACKGROUND_JOBS: readonly JobEntry[] = [
  job("recordings.verify_upload", {
    trigger: "upload-complete; resume-pending-verifications",
    lane: "io",
    file: "modules/recordings/upload-verify.ts",
    handler: verifyUploadJob,
  }),
  job("recordings.delete_objects", {
    trigger: "an erasure, a replaced upload, assembled chunks, project deletion, an archive's erasure",
    lane: "io",
    file: "modules/recordings/objects.ts",
    handler: deleteObjects,
  }),
  job("transcriptions.auto", { trigger: "an upload verified", lane: "io", file: "modules/transcriptions/job.ts", handler: autoTranscribe }),
  job("transcriptions.run", {
    trigger: "POST /transcriptions; transcriptions.auto",
    lane: "model",
    file: "modules/transcriptions/job.ts",
    // Completing a live transcription reuses its committed segments (decision 173).
    handler: (deps) => runTranscription(deps, reusableLiveWork),
  }),
  job("transcriptions.redaction_pass", {
    trigger: "a transcription completed, with the local LLM installed",
    lane: "model",
    file: "modules/transcriptions/redaction-pass.ts",
    handler: runRedactionPass,
  }),
  job("summaries.auto", {
    trigger: "a transcription completed, configured to summarize",
    lane: "io",
    file: "modules/summaries/job.ts",
    handler: autoSummarize,
  }),
  job("summaries.run", { trigger: "POST /summaries; summaries.auto", lane: "model", file: "modules/summaries/job.ts", handler: runSummary }),
  job("search.index_transcription", { trigger: "a transcription completed", lane: "io", file: "modules/search/indexer.ts", handler: indexTranscriptionJob }),
  job("search.reindex", { trigger: "search-check-index, when chunks lack vectors", lane: "io", file: "modules/search/indexer.ts", handler: reindexJob }),
  job("search.build_cells", { trigger: "search-check-index, for a large library", lane: "io", file: "modules/search/indexer.ts", handler: buildCellsJob }),
  job("db.truncate_wal", { trigger: "an erasure; an encrypted export built", lane: "io", file: "jobs/truncate-wal.ts", handler: truncateWal }),
  job("storage.seal_plaintext", {
    trigger: "seal-plaintext-audio; the batch before it",
    lane: "io",
    file: "jobs/seal-plaintext-audio.ts",
    handler: (deps) => plaintextSealing(deps)?.job ?? null,
  }),
  job("live.chunk_received", { trigger: "a streaming recording's chunk stored", lane: "io", file: "modules/live/job.ts", handler: liveChunkReceived }),
  job("live.transcribe", { trigger: "live.chunk_received", lane: "model", file: "modules/live/job.ts", handler: liveTranscribe }),
  job("live.verification_failed", {
    trigger: "a streaming upload failing verification",
    lane: "io",
    file: "modules/live/job.ts",
    handler: liveVerificationFailed,
  }),
  job("exports.build", { trigger: "POST /exports", lane: "io", file: "modules/exports/job.ts", handler: buildExport }),
];

export const BACKGROUND_TASKS: readonly TaskEntry[] = [
  {
    task: "purge-idempotency-keys",
    schedule: "0 */10 * * * *",
    file: "http/idempotency.ts",
    run: (d) => () => void purgeExpiredIdempotencyKeys(d.db, d.clock.now()),
  },
  { task: "purge-spent-tokens", schedule: "0 17 * * * *", file: "http/credentials.ts", run: (d) => () => void purgeSpentTokens(d, d.clock.now()) },
  { task: "purge-finished-jobs", schedule: "0 7 * * * *", file: "jobs/queue.ts", run: (d) => () => void purgeFinishedJobs(d.db, d.clock.now()) },
  { task: "purge-old-events", schedule: "0 37 4 * * *", file: "events/outbox.ts", run: (d) => () => void purgeOldEvents(d.db, d.clock.now()) },
  // Clients that gave up retrying upload-complete (which revives the job too) are not left behind for long.
  {
    task: "resume-pending-verifications",
    schedule: "0 */15 * * * *",
    file: "modules/recordings/background.ts",
    run: (d) => () => void resumePendingVerifications(d),
  },
  { task: "sweep-partial-uploads", schedule: "0 17 * * * *", file: "modules/recordings/background.ts", run: (d) => () => sweepPartialUploads(d) },
  // Every 5 minutes at :30 s; serve also runs it once at start (main.ts).
  { task: "search-check-index", schedule: "30 */5 * * * *", file: "modules/search/indexer.ts", run: (d) => () => checkSearchIndex(d) },
  { task: "webhooks-dispatch", schedule: "* * * * * *", file: "modules/webhooks/background.ts", run: dispatchWebhooks },
  { task: "webhooks-purge-deliveries", schedule: "0 23 3 * * *", file: "modules/webhooks/background.ts", run: purgeDeliveries },
  // Every 10 s: an expired command must not linger as pending in GET responses for long (spec 3.2).
  {
    task: "expire-device-commands",
    schedule: "*/10 * * * * *",
    file: "modules/commands/runtime.ts",
    run: (d) => () => void expireCommands(d.db, d.clock.now()),
  },
  {
    task: "device-offline-check",
    schedule: "0 * * * * *",
    file: "modules/heartbeats/service.ts",
    run: (d) => () => void reportOfflineDevices(d, d.clock.now()),
  },
  { task: "expire-recordings", schedule: "0 17 3 * * *", file: "modules/retention/service.ts", run: (d) => () => runRetention(d) },
  { task: "seal-plaintext-audio", schedule: "0 */5 * * * *", file: "jobs/seal-plaintext-audio.ts", run: (d) => plaintextSealing(d)?.startPass ?? null },
];

/**
 * The one contract: registers every job's handler on deps.queue and returns every periodic
 * task, and does nothing else. `serve` starts both; tests call it and drive the queue with drain().
 */
export function registerBackgroundWork(deps: Deps): PeriodicTask[] {
  for (const entry of BACKGROUND_JOBS) {
    const handler = entry.handler(deps);
    // The entry's payload type was checked where job() built it.
    if (handler) deps.queue.register(entry.job, handler as JobHandler<any>, { lane: entry.lane });
  }
  return BACKGROUND_TASKS.flatMap((entry) => {
    const run = entry.run(deps);
    return run ? [{ name: entry.task, pattern: entry.schedule, run }] : [];
  });
}

/**
 * What starting the background does once, after registration (serve at boot, a test's app
 * or restart): the webhook dispatcher wakes on each committed event, and verifications whose
 * jobs died before this start are queued again.
 */
export function startBackgroundWork(deps: Deps): void {
  wakeOnEvents(deps);
  resumePendingVerifications(deps);
}
