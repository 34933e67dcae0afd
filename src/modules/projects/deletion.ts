import type { Deps } from "../../deps";
import { ApiError } from "../../http/errors";
import { type Actor, operatorActor, recordAudit } from "../audit/service";
import { deleteProjectRow, findProjectByName, type Project } from "./store";

/** What deleting a project erased (or, for a dry run, would erase). */
export type ProjectDeletion = { project: Project; recordings: number; dry_run: boolean };

/** Thrown to roll a dry run's transaction back once it has counted what it would erase. */
class DryRun extends Error {}

/**
 * `parley projects delete NAME` (decision 107), in one transaction: the projectDeleted
 * guard refuses the whole deletion while a legal hold is active in the project (409
 * legal_hold_active naming every hold) before anything is touched, then the cascade erases
 * every recording through the one erasure (recordings/erasure.ts);
 * the project's row goes, and with it (migration 0019's trigger, data_keys' cascade) its
 * keys, devices, end users, webhooks, holds, exports, configuration and its data key:
 * whatever copy of its sealed audio survives (a backup, an S3 version) can no longer be
 * read. A job removes every stored object under the project's prefix. Audited as `actor`.
 * A dry run does all of it, counts, and rolls back.
 */
export function deleteProject(
  deps: Pick<Deps, "db" | "cascades" | "queue">,
  name: string,
  now: Date,
  options: { dryRun?: boolean; actor?: Actor } = {},
): ProjectDeletion {
  const { db } = deps;
  const project = findProjectByName(db, name);
  if (!project) throw new ApiError("not_found", `No project named ${name}.`, { param: "name" });
  const actor = options.actor ?? operatorActor();
  const erased: Record<string, number> = {};
  try {
    db.transaction(() => {
      const deletion = { projectId: project.id, actor, now, erased };
      deps.cascades.check("projectDeleted", deletion);
      deps.cascades.fire("projectDeleted", deletion);
      deleteProjectRow(db, project.id);
      deps.queue.enqueue("recordings.delete_objects", { prefix: `${project.id}/` });
      recordAudit(db, actor, null, "project.delete", [project.id], now);
      if (options.dryRun) throw new DryRun();
    })();
  } catch (err) {
    if (!(err instanceof DryRun)) throw err;
  }
  return { project, recordings: erased.recordings ?? 0, dry_run: Boolean(options.dryRun) };
}
