import type { Deps } from "../../deps";
import type { JobContracts } from "../../jobs/contracts";
import type { Job } from "../../jobs/queue";
import type { Tenant } from "../../tenancy";

/** Job that deletes stored objects after the transaction that stopped referring to them. */
export const DELETE_OBJECTS_JOB = "recordings.delete_objects";
export type DeleteObjectsPayload = JobContracts[typeof DELETE_OBJECTS_JOB];

/** Every object of a recording lives under this prefix: `<project>/<mode>/<recording>/`. */
export function recordingPrefix(tenant: Tenant, recordingId: string): string {
  return `${tenant.projectId}/${tenant.mode}/${recordingId}/`;
}

/**
 * Removes the objects a committed change left unreferenced (a deleted recording, a replaced
 * staged upload, chunks after assembly). Deleting a missing object is fine, so the job can
 * run twice after a crash.
 */
export function deleteObjects(deps: Pick<Deps, "storage">) {
  return async ({ payload }: Job<JobContracts[typeof DELETE_OBJECTS_JOB]>) => {
    for (const key of payload.keys ?? []) await deps.storage.remove(key);
    if (payload.prefix) await deps.storage.removePrefix(payload.prefix);
  };
}
