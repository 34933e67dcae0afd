import type { Deps } from "../../deps";
import { listPendingVerifications } from "./store";
import { deleteUpload, listUnreceivedUploads, uploadObjectKey } from "./upload-store";
import { enqueueVerification } from "./upload-verify";

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
 * The hourly sweep: temp files of interrupted writes, the plaintext copies of processes killed
 * mid-file since the server started (a CLI command's), then upload URLs that expired without a recorded PUT.
 */
export async function sweepPartialUploads(deps: Deps): Promise<void> {
  await deps.storage.sweepPartial(new Date(deps.clock.now().getTime() - PARTIAL_MAX_AGE_MS));
  deps.scratch.sweepEnded();
  await sweepUnreceivedUploads(deps);
}
