import { backgroundLlm } from "../../engines";
import type { Deps } from "../../deps";
import type { JobContracts } from "../../jobs/contracts";
import type { Job } from "../../jobs/queue";
import type { Tenant } from "../../tenancy";
import { resolveConfig } from "../config/service";
import { findRecording } from "../recordings/service";
import { findIdentifiersWithLlm, llmPassOf, type LlmPass, LlmPassFailure, recordLlmPass } from "../redaction/service";
import { announceCompleted } from "./completed-event";
import { findStoredTranscription, findTranscription } from "./store";
import { diedTooOften, limitFor, withTimeLimit } from "./time-limit";

type PassPayload = JobContracts["transcriptions.redaction_pass"];

/**
 * Redaction's model pass over a completed transcription (decision 108): the local LLM lists
 * the identifiers the rules may miss, and those standing verbatim in the text are stored for
 * every later redacted read. A pass that fails is stored as failed, with nothing found, and
 * rules alone redact. Idempotent: a transcription with a stored pass is left alone, and the
 * announcement the pass held back is made in the transaction that stores it, so once.
 */
export function runRedactionPass(deps: Deps) {
  return async (job: Job<PassPayload>): Promise<void> => {
    const { db } = deps;
    const llm = backgroundLlm(deps.engines, deps.config, "redaction");
    const tenant: Tenant = { projectId: job.payload.project_id, mode: job.payload.mode };
    const id = job.payload.transcription_id;
    const stored = findStoredTranscription(db, tenant, id);
    if (!stored || stored.record.status !== "completed" || llmPassOf(db, tenant, id)) return;
    const lines = stored.record.segments.map((s) => s.text);
    let outcome: Pick<LlmPass, "status" | "identifiers" | "error">;
    try {
      const interrupted = diedTooOften(job);
      if (interrupted) throw new LlmPassFailure(interrupted);
      const limit = limitFor(deps.config.processing, stored.record.duration_seconds ?? 0);
      const identifiers = await withTimeLimit(limit, (run) => findIdentifiersWithLlm(llm, lines, run), job.signal);
      outcome = { status: "completed", identifiers, error: null };
    } catch (err) {
      // Cut off by the server stopping: it runs again after the restart.
      if (job.signal.aborted) throw err;
      const error = err instanceof Error ? err.message : String(err);
      deps.log.warn("redaction model pass failed; rules alone redact this transcription", { transcription_id: id, error });
      outcome = { status: "failed", identifiers: [], error };
    }
    const now = deps.clock.now();
    db.transaction(() => {
      if (!recordLlmPass(db, tenant, id, { ...outcome, model: llm.model, created_at: now.toISOString() }) || !job.payload.announce) return;
      const recording = findRecording(db, tenant, stored.record.recording_id);
      const record = findTranscription(db, tenant, id);
      if (!recording || !record) return;
      announceCompleted(deps, tenant, record, resolveConfig(deps, tenant, { endUserId: recording.end_user_id, deviceId: recording.device_id }), now);
    })();
  };
}
