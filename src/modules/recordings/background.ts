import type { Deps } from "../../deps";
import type { PeriodicTask } from "../../jobs/scheduler";
import { registerObjectDeletion } from "./objects";
import { listPendingVerifications } from "./store";
import { deleteUpload, listUnreceivedUploads, uploadObjectKey } from "./upload-store";
import { enqueueVerification, registerUploadVerification } from "./upload-verify";

/** Temp files of interrupted writes older than this are removed (no live write takes a day). */
const PARTIAL_MAX_AGE_MS = 24 * 3600 * 1000;

/**
 * Upload URLs that expired without a recorded PUT. A crash between a PUT's final rename and
 * its row update leaves an object nothing refers to under the URL's key: it goes here, with
 * the row. Rows are only old enough once the token can no longer be used.
 */
export async function sweepUnreceivedUploads(deps: Deps): Promise<number> {
  const cutoff = new Date(deps.clock.now().getTime() - deps.config.uploads.tokenTtlSeconds * 1000 - PARTIAL_MAX_AGE_MS);
  let removed = 0;
  for (const upload of listUnreceivedUploads(deps.db, cutoff, 500)) {
    await deps.storage.remove(uploadObjectKey(upload));
    deleteUpload(deps.db, upload.credential_id);
    removed++;
  }
  return removed;
}

/**
 * Queues verification again for every recording still waiting for it. A job that failed its
 * last attempt is dead and would leave the recording pending forever (425 to upload-complete,
 * 409 to upload-url); enqueueing is a no-op where a job is still queued or running.
 */
export function resumePendingVerifications(deps: Deps): number {
  const pending = listPendingVerifications(deps.db);
  for (const r of pending) enqueueVerification(deps.queue, { projectId: r.project_id, mode: r.mode }, r.id);
  return pending.length;
}

/**
 * Job handlers and periodic tasks of recordings and uploads, for src/background.ts. It runs
 * once per process at boot, so it also revives verifications whose jobs died before.
 */
export function registerRecordingWork(deps: Deps): PeriodicTask[] {
  registerUploadVerification(deps);
  registerObjectDeletion(deps);
  resumePendingVerifications(deps);
  return [
    // Clients that gave up retrying upload-complete (which revives the job too) are not left behind for long.
    { name: "resume-pending-verifications", pattern: "0 */15 * * * *", run: () => void resumePendingVerifications(deps) },
    {
      name: "sweep-partial-uploads",
      pattern: "0 17 * * * *",
      run: async () => {
        await deps.storage.sweepPartial(new Date(deps.clock.now().getTime() - PARTIAL_MAX_AGE_MS));
        await sweepUnreceivedUploads(deps);
      },
    },
  ];
}
