import type { Deps } from "../../deps";
import { ApiError } from "../../http/errors";
import type { Tenant } from "../../tenancy";
import { systemActor } from "../audit/service";
import { resolveConfig } from "../config/service";
import { expireExportArchives } from "../exports/erasure";
import { eraseRecording, listRecordingOwners, listRecordingsMadeBefore, type StoredRecording } from "../recordings/service";
import { latestCompletedTranscription } from "../transcriptions/service";

const DAY_MS = 86_400_000;

const cutoff = (now: Date, days: number) => new Date(now.getTime() - days * DAY_MS).toISOString();
const madeAt = (r: StoredRecording) => r.recorded_at ?? r.created_at;

/** What a retention run did: recordings erased whole, recordings whose audio alone was erased, and those kept because a legal hold covers them. */
export type RetentionReport = { expired: string[]; audioErased: string[]; held: string[] };

/**
 * Whether the whole recording has expired, once its audio has: its transcript, if it has
 * one, must be past retention_transcript_days too. null keeps: a transcript kept forever
 * keeps its recording, and only the audio goes (decision 103).
 */
function wholeExpired(deps: Pick<Deps, "db">, tenant: Tenant, recording: StoredRecording, transcriptCutoff: string | null): boolean {
  if (transcriptCutoff !== null && madeAt(recording) < transcriptCutoff) return true;
  return latestCompletedTranscription(deps.db, tenant, recording.id) === null;
}

/**
 * Recordings whose audio is past retention_audio_days (counted from when they were
 * recorded, else created; each owner's effective configuration: device over end user over
 * project over organization) are erased whole through DELETE's path (recording.deleted,
 * content copies, stored bytes) when their transcript has expired too, else lose their
 * audio alone: both through the one erasure (recordings/erasure.ts), each in its own
 * transaction, audited as the system's. The erasure asks the legal holds before touching
 * anything, so a held recording is left untouched and reported held.
 */
export function expireRecordings(deps: Deps, now: Date): RetentionReport {
  const report: RetentionReport = { expired: [], audioErased: [], held: [] };
  for (const owner of listRecordingOwners(deps.db)) {
    const tenant: Tenant = { projectId: owner.project_id, mode: owner.mode };
    const config = resolveConfig(deps, tenant, { endUserId: owner.end_user_id, deviceId: owner.device_id });
    if (config.retention_audio_days === null) continue;
    const transcriptCutoff = config.retention_transcript_days === null ? null : cutoff(now, config.retention_transcript_days);
    for (const recording of listRecordingsMadeBefore(deps.db, owner, cutoff(now, config.retention_audio_days))) {
      const whole = wholeExpired(deps, tenant, recording, transcriptCutoff);
      if (!whole && recording.audio_erased_at) continue;
      try {
        deps.db.transaction(() => {
          eraseRecording(deps, tenant, recording, whole ? "whole" : "audio", now);
          deps.audit.record(systemActor("retention"), tenant, whole ? "recording.expire" : "recording.audio.expire", [recording.id]);
        })();
      } catch (err) {
        // The erasure asked the legal holds first: a held recording was not touched.
        if (err instanceof ApiError && err.code === "legal_hold_active") {
          report.held.push(recording.id);
          continue;
        }
        throw err;
      }
      (whole ? report.expired : report.audioErased).push(recording.id);
    }
  }
  return report;
}

/** The daily retention run (src/background.ts schedules it at a quiet hour): recordings, then export archives past PARLEY_EXPORT_RETENTION_DAYS (decision 107). */
export function runRetention(deps: Deps): void {
  const report = expireRecordings(deps, deps.clock.now());
  const { expired, audioErased, held } = report;
  const archives = expireExportArchives(deps, deps.clock.now());
  if (expired.length + audioErased.length + held.length + archives.length > 0) {
    deps.log.info("retention run", {
      expired: expired.length,
      audio_erased: audioErased.length,
      kept_under_hold: held.length,
      export_archives_expired: archives.length,
    });
  }
}
