import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import { dashboardSessionOnly } from "../../http/auth";
import { DASHBOARD_POWERS } from "../../http/roles";
import { ApiError } from "../../http/errors";
import type { Tenant } from "../../tenancy";
import { resolveConfig } from "../config/service";
import { findRecording } from "../recordings/service";
import { AUDIO_FAILURES } from "./job";
import { HAS_AUDIO, startTranscription } from "./service";
import { findProcessingTranscription, listLatestFailures } from "./store";

export type Reprocessed = { recording_id: string; transcription_id: string; project_id: string; mode: Tenant["mode"] };

/**
 * "Reprocess all failed": a new transcription of every recording whose newest transcription
 * failed for a reason an operator can fix (a model installed since, say; decision 129 leaves
 * such a recording uploaded) and whose audio is still stored, in `tenant` or in every project
 * and mode (null: the CLI). A failure that is the audio's own (AUDIO_FAILURES) would fail
 * again and is left. Each goes through the job queue normal processing uses
 * (startTranscription), with the language automatic processing would choose (the
 * configuration nearest the recording); earlier transcriptions are kept, as a POST
 * /v1/transcriptions reprocessing keeps them. Each recording in its own write transaction
 * (the lock taken up front, decision 116): one that changed meanwhile is left be.
 */
export function reprocessFailedRecordings(deps: Pick<Deps, "db" | "queue" | "events" | "deviceSource" | "clock">, tenant: Tenant | null): Reprocessed[] {
  const started: Reprocessed[] = [];
  for (const failure of listLatestFailures(deps.db, tenant)) {
    if (failure.code && AUDIO_FAILURES.has(failure.code)) continue;
    const t = failure.tenant;
    const transcription = deps.db.transaction(() => {
      const recording = findRecording(deps.db, t, failure.recording_id);
      if (!recording || !HAS_AUDIO.has(recording.status) || recording.audio_erased_at) return null;
      if (findProcessingTranscription(deps.db, t, recording.id)) return null;
      const { language } = resolveConfig(deps, t, { endUserId: recording.end_user_id, deviceId: recording.device_id });
      return startTranscription(deps, t, recording, language, deps.clock.now());
    })();
    if (transcription) started.push({ recording_id: failure.recording_id, transcription_id: transcription.id, project_id: t.projectId, mode: t.mode });
  }
  return started;
}

/** The dashboard's "Reprocess all failed" (Recordings page), in the session's project and mode; administrators' sessions only. */
export function reprocessRoutes(deps: Deps) {
  return new Elysia({ name: "parley.reprocess", prefix: "/dashboard/api" })
    .use(dashboardSessionOnly(deps, { roles: DASHBOARD_POWERS.reprocess }))
    .post("/recordings/reprocess-failed", ({ session }) => {
      if (!session.tenant) throw new ApiError("forbidden", "Choose a project first: recordings belong to one project and mode.");
      const started = reprocessFailedRecordings(deps, session.tenant);
      deps.log.info("dashboard: failed recordings reprocessed", {
        count: started.length,
        admin_id: session.adminId,
        project_id: session.tenant.projectId,
        mode: session.tenant.mode,
      });
      return { reprocessed: started.length, data: started };
    });
}
