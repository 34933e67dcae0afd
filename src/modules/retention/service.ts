import type { Deps } from "../../deps";
import { ApiError } from "../../http/errors";
import type { PeriodicTask } from "../../jobs/scheduler";
import type { Tenant } from "../../tenancy";
import { systemActor } from "../audit/service";
import { resolveConfig } from "../config/service";
import { isUnderHold } from "../legal-holds/service";
import { eraseRecording, listRecordingOwners, listRecordingsMadeBefore, type StoredRecording } from "../recordings/service";
import { latestCompletedTranscription } from "../transcriptions/service";

const DAY_MS = 86_400_000;

const cutoff = (now: Date, days: number) => new Date(now.getTime() - days * DAY_MS).toISOString();
const madeAt = (r: StoredRecording) => r.recorded_at ?? r.created_at;

/** What a retention run did: the recordings it erased, and those it kept because a legal hold covers them. */
export type RetentionReport = { expired: string[]; held: string[] };

/**
 * A recording expires when its audio is past retention_audio_days and its transcript, if it
 * has one, past retention_transcript_days, each counted from when it was recorded (else
 * created), with its owner's effective configuration (device over end user over project over
 * organization). null keeps: a transcript kept forever keeps its recording (decision 103).
 */
function isExpired(deps: Pick<Deps, "db">, tenant: Tenant, recording: StoredRecording, transcriptCutoff: string | null): boolean {
  if (transcriptCutoff !== null && madeAt(recording) < transcriptCutoff) return true;
  return latestCompletedTranscription(deps.db, tenant, recording.id) === null;
}

/**
 * Erases every expired recording through the same path as DELETE (recording.deleted event,
 * content copies, stored bytes), audited as the system's, one transaction each. Held
 * recordings are skipped; a hold placed meanwhile refuses the erasure inside its
 * transaction (the legal-holds cascade), and it is skipped too.
 */
export function expireRecordings(deps: Deps, now: Date): RetentionReport {
  const report: RetentionReport = { expired: [], held: [] };
  for (const owner of listRecordingOwners(deps.db)) {
    const tenant: Tenant = { projectId: owner.project_id, mode: owner.mode };
    const config = resolveConfig(deps, tenant, { endUserId: owner.end_user_id, deviceId: owner.device_id });
    if (config.retention_audio_days === null) continue;
    const transcriptCutoff = config.retention_transcript_days === null ? null : cutoff(now, config.retention_transcript_days);
    for (const recording of listRecordingsMadeBefore(deps.db, owner, cutoff(now, config.retention_audio_days))) {
      if (!isExpired(deps, tenant, recording, transcriptCutoff)) continue;
      if (isUnderHold(deps.db, tenant, recording) || !eraseExpired(deps, tenant, recording, now)) report.held.push(recording.id);
      else report.expired.push(recording.id);
    }
  }
  return report;
}

function eraseExpired(deps: Deps, tenant: Tenant, recording: StoredRecording, now: Date): boolean {
  try {
    deps.db.transaction(() => {
      eraseRecording(deps, tenant, recording, now);
      deps.audit.record(systemActor("retention"), tenant, "recording.expire", [recording.id]);
    })();
    return true;
  } catch (err) {
    if (err instanceof ApiError && err.code === "legal_hold_active") return false;
    throw err;
  }
}

/** The daily retention run, at a quiet hour. */
export function registerRetentionWork(deps: Deps): PeriodicTask[] {
  return [
    {
      name: "expire-recordings",
      pattern: "0 17 3 * * *",
      run: () => {
        const report = expireRecordings(deps, deps.clock.now());
        if (report.expired.length + report.held.length > 0) deps.log.info("retention run", { expired: report.expired.length, kept_under_hold: report.held.length });
      },
    },
  ];
}
