import type { Deps } from "../../deps";
import { eraseRecording } from "./service";
import { listProjectRecordings } from "./store";

/**
 * Deleting a project (decision 107) erases each of its recordings, in both modes, through
 * DELETE's path (eraseRecording: recording.deleted, the copies of its content, a job for
 * its stored objects), each audited as `recording.delete` by whoever deletes the project, inside
 * the deleting transaction: a legal hold on any of them rolls the whole deletion back.
 */
export function registerRecordingCascades(deps: Deps): void {
  deps.cascades.on("projectDeleted", "recordings", ({ projectId, actor, now, erased }) => {
    const recordings = listProjectRecordings(deps.db, projectId);
    for (const recording of recordings) {
      const tenant = { projectId, mode: recording.mode };
      eraseRecording(deps, tenant, recording, now);
      deps.audit.record(actor, tenant, "recording.delete", [recording.id]);
    }
    erased.recordings = recordings.length;
  });
}
