import type { Deps } from "../../deps";
import { eraseRecording } from "./erasure";
import { listProjectRecordings } from "./store";

/**
 * Deleting a project (decision 107) erases each of its recordings, in both modes, through
 * the one erasure (erasure.ts), each audited as `recording.delete` by whoever deletes the
 * project, inside the deleting transaction. Legal holds were asked before (the projectDeleted
 * guard), so nothing of the project is touched while one is active.
 */
export function registerRecordingCascades(deps: Deps): void {
  deps.cascades.on("projectDeleted", "recordings", ({ projectId, actor, now, erased }) => {
    const recordings = listProjectRecordings(deps.db, projectId);
    for (const recording of recordings) {
      const tenant = { projectId, mode: recording.mode };
      eraseRecording(deps, tenant, recording, "whole", now);
      deps.audit.record(actor, tenant, "recording.delete", [recording.id]);
    }
    erased.recordings = recordings.length;
  });
}
