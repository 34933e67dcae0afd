import type { Deps } from "../../deps";
import { backgroundLlm } from "../../engines";
import { LlmUnavailableError } from "../../engines/llm";
import { MissingModelError } from "../../engines/missing-model";
import { recordEvent } from "../../events/outbox";
import type { Tenant } from "../../tenancy";
import type { JobContracts } from "../../jobs/contracts";
import type { Job } from "../../jobs/queue";
import { resolveConfig } from "../config/service";
import { identifiersFound, redactSummary } from "../redaction/service";
import { eventData } from "../transcriptions/schema";
import { findStoredTranscription, findTranscription } from "../transcriptions/service";
import { diedTooOften, limitFor, TimeLimitError, withTimeLimit } from "../transcriptions/time-limit";
import { generateSummary, SummaryFailure } from "./generate";
import { SUMMARY_EVENT_FIELDS, type Summary, type TemplateName } from "./schema";
import { type RunSummaryPayload, startSummary } from "./service";
import { findStoredSummary, findSummaryByTemplate, markSummaryCompleted, markSummaryFailed } from "./store";
import { TEMPLATES } from "./templates";

type AutoSummaryPayload = JobContracts["summaries.auto"];

function toError(err: unknown): NonNullable<Summary["error"]> {
  if (err instanceof SummaryFailure) return { code: err.code, message: err.message };
  if (err instanceof TimeLimitError) return { code: "timeout", message: err.message };
  // Their messages are written for the operator (a missing model names the command that installs it).
  if (err instanceof LlmUnavailableError || err instanceof MissingModelError) return { code: "processing_error", message: err.message };
  // An engine that crashed: the operator's first step is the check of every engine.
  return { code: "processing_error", message: `Summary failed: ${err instanceof Error ? err.message : String(err)}. Check the engines with: parley doctor.` };
}

/**
 * The summary job. Idempotent and replacement-safe: it works only on the run it was
 * enqueued for, and its final update is conditional on that run still processing, so a
 * stale run never overwrites a newer request's result and events happen once.
 */
export function runSummary(deps: Deps) {
  return async (job: Job<RunSummaryPayload>): Promise<void> => {
    const { db, clock } = deps;
    const tenant: Tenant = { projectId: job.payload.project_id, mode: job.payload.mode };
    const stored = findStoredSummary(db, tenant, job.payload.summary_id);
    if (!stored || stored.run !== job.payload.run || stored.record.status !== "processing") return;
    const id = stored.record.id;
    const transcription = findTranscription(db, tenant, stored.record.transcription_id);
    if (!transcription) return;
    const template = TEMPLATES[stored.record.template];
    let settle: (now: Date) => boolean;
    let event: "summary.completed" | "summary.failed";
    try {
      const interrupted = diedTooOften(job);
      if (interrupted) throw new SummaryFailure("processing_error", interrupted);
      const limit = limitFor(deps.config.processing, transcription.duration_seconds ?? 0);
      // Time queued behind another job's (or an Ask turn's) model call is left out of the limit.
      const result = await withTimeLimit(
        limit,
        (run) => generateSummary(backgroundLlm(deps.engines, deps.config, "summary"), template, transcription.segments, transcription.recording_id, run),
        job.signal,
      );
      event = "summary.completed";
      settle = (now) => markSummaryCompleted(db, tenant, id, job.payload.run, { ...result, completed_at: now.toISOString() });
    } catch (err) {
      // Cut off by the server stopping: no failure of the summary; it runs again after the restart.
      if (job.signal.aborted) throw err;
      const error = toError(err);
      if (error.code === "processing_error") deps.log.warn("summary failed", { summary_id: id, error: error.message });
      event = "summary.failed";
      settle = (now) => markSummaryFailed(db, tenant, id, job.payload.run, error, now.toISOString());
    }
    const now = clock.now();
    db.transaction(() => {
      if (!settle(now)) return;
      const record = findStoredSummary(db, tenant, id)!.record;
      const redact = event === "summary.completed" && resolveConfig(deps, tenant, { endUserId: stored.endUserId }).redact_webhook_payloads;
      recordEvent(
        deps,
        tenant,
        event,
        eventData(redact ? redactSummary(record, identifiersFound(db, tenant, record.transcription_id)) : record, SUMMARY_EVENT_FIELDS[event]),
        now,
      );
    })();
  };
}

/**
 * The summary a completed transcription's configuration asks for (contract summaries.auto,
 * enqueued by transcriptions in the transaction that completes it). Idempotent: a
 * transcription that already has a summary with that template (a second run, or a caller
 * who asked first) starts nothing more.
 */
export function autoSummarize(deps: Deps) {
  return (job: Job<AutoSummaryPayload>): void => {
    const { db } = deps;
    const tenant: Tenant = { projectId: job.payload.project_id, mode: job.payload.mode };
    db.transaction(() => {
      const stored = findStoredTranscription(db, tenant, job.payload.transcription_id);
      if (!stored || stored.record.status !== "completed") return;
      // The configuration accepts only template names; a value stored before it checked them
      // is reported, not silently swapped.
      let template = job.payload.template as TemplateName;
      if (!Object.hasOwn(TEMPLATES, template)) {
        deps.log.warn("unknown summary_template in configuration; using general", { summary_template: template, recording_id: stored.record.recording_id });
        template = "general";
      }
      if (findSummaryByTemplate(db, tenant, stored.record.id, template)) return;
      startSummary(deps, tenant, stored.record, stored.endUserId, template, deps.clock.now());
    })();
  };
}
