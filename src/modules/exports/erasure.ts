import type { Deps } from "../../deps";
import type { Principal } from "../../http/auth";
import { ApiError } from "../../http/errors";
import { systemActor } from "../audit/service";
import { exportTenant, loadExport } from "./service";
import { type ExportRow, listArchivesCompletedBefore, markArchiveErased } from "./store";

type ErasureDeps = Pick<Deps, "db" | "clock" | "audit" | "queue">;

const DAY_MS = 86_400_000;

/**
 * The archive's erasure (decision 107), inside the caller's transaction: the row keeps its
 * record with the new status and erased_at, and the durable object-deletion job removes the
 * file after the commit (as for a deleted recording: a crash leaves a file for the job,
 * never a record of an archive that is still there to download).
 */
function eraseArchive(deps: ErasureDeps, row: ExportRow, status: "deleted" | "expired"): void {
  markArchiveErased(deps.db, row.id, status, deps.clock.now().toISOString());
  if (row.storage_key) deps.queue.enqueue("recordings.delete_objects", { keys: [row.storage_key] });
}

/**
 * DELETE /exports/{id}: the archive goes, the export stays readable as `deleted` (its
 * record is part of the chain of custody). Audited. A build still running cannot be
 * deleted yet (409); deleting an erased one again changes nothing.
 */
export function deleteExport(deps: ErasureDeps, principal: Principal, id: string): void {
  deps.db.transaction(() => {
    const row = loadExport(deps.db, principal, id);
    if (row.status === "processing") throw new ApiError("resource_conflict", `Export ${id} is still being built; delete it once it has completed or failed.`);
    if (row.status === "deleted" || row.status === "expired") return;
    eraseArchive(deps, row, "deleted");
    deps.audit.record(principal, principal, "export.delete", [id]);
  })();
}

/**
 * Archives completed more than PARLEY_EXPORT_RETENTION_DAYS ago (0 keeps them) are erased,
 * each in its own transaction, audited as the system's retention (decision 107). Part of
 * the daily retention run. Returns the ids of the exports that expired.
 */
export function expireExportArchives(deps: ErasureDeps & Pick<Deps, "config">, now: Date): string[] {
  const days = deps.config.exportRetentionDays;
  if (days === 0) return [];
  const expired: string[] = [];
  for (const row of listArchivesCompletedBefore(deps.db, new Date(now.getTime() - days * DAY_MS).toISOString())) {
    deps.db.transaction(() => {
      eraseArchive(deps, row, "expired");
      deps.audit.record(systemActor("retention"), exportTenant(row), "export.expire", [row.id]);
    })();
    expired.push(row.id);
  }
  return expired;
}
