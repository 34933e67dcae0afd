import type { Database } from "bun:sqlite";
import type { Deps } from "../../deps";
import { recordEvent } from "../../events/outbox";
import type { Principal } from "../../http/auth";
import type { Tenant } from "../../http/credentials";
import { ApiError } from "../../http/errors";
import type { Page } from "../../http/pagination";
import { newId } from "../../ids";
import { eventData, type Transcription } from "../transcriptions/schema";
import { findStoredTranscription } from "../transcriptions/store";
import { type CreateSummaryBody, type ListSummariesQuery, SUMMARY_EVENT_FIELDS, type Summary, type TemplateName } from "./schema";
import { findStoredSummary, findSummaryByTemplate, insertSummary, listSummaryRows, restartSummary } from "./store";
import { TEMPLATES } from "./templates";

export const RUN_SUMMARY_JOB = "summaries.run";
export type RunSummaryPayload = { project_id: string; mode: Tenant["mode"]; summary_id: string; run: number };

/**
 * Starts the summary of a completed transcription with a template: a new summary, or the
 * existing one for that transcription and template re-run under the same id (its earlier
 * result is replaced). Records summary.started and enqueues the job. Call inside a transaction.
 */
export function startSummary(deps: Pick<Deps, "db" | "queue" | "events">, tenant: Tenant, transcription: Transcription, endUserId: string | null, templateName: TemplateName, now: Date): Summary {
  const { db } = deps;
  const template = TEMPLATES[templateName];
  const at = now.toISOString();
  const existing = findSummaryByTemplate(db, tenant, transcription.id, templateName);
  let run = 1;
  let summaryId: string;
  if (existing) {
    summaryId = existing.record.id;
    run = restartSummary(db, tenant, summaryId, template.version, at);
  } else {
    summaryId = newId("sum_", now.getTime());
    insertSummary(
      db,
      tenant,
      {
        id: summaryId,
        transcription_id: transcription.id,
        recording_id: transcription.recording_id,
        status: "processing",
        template: templateName,
        format: template.format,
        text: null,
        structured: null,
        error: null,
        model: null,
        prompt_version: template.version,
        created_at: at,
        started_at: at,
        completed_at: null,
        failed_at: null,
      },
      endUserId,
    );
  }
  const summary = findStoredSummary(db, tenant, summaryId)!.record;
  recordEvent(deps, tenant, "summary.started", eventData(summary, SUMMARY_EVENT_FIELDS["summary.started"]), now);
  const payload: RunSummaryPayload = { project_id: tenant.projectId, mode: tenant.mode, summary_id: summaryId, run };
  deps.queue.enqueue(RUN_SUMMARY_JOB, payload, { dedupeKey: `${RUN_SUMMARY_JOB}:${summaryId}:${run}` });
  return summary;
}

/** POST /summaries. */
export function createSummary(deps: Pick<Deps, "db" | "queue" | "events">, principal: Principal, body: CreateSummaryBody, now: Date): Summary {
  const { db } = deps;
  return db.transaction(() => {
    const stored = findStoredTranscription(db, principal, body.transcription_id);
    if (!stored || (principal.endUserId && stored.endUserId !== principal.endUserId)) {
      throw new ApiError("resource_not_found", `No transcription ${body.transcription_id}.`, { param: "transcription_id" });
    }
    if (stored.record.status !== "completed") {
      throw new ApiError("transcription_not_ready", `Transcription ${stored.record.id} is ${stored.record.status}; only a completed transcription can be summarised.`, {
        param: "transcription_id",
      });
    }
    return startSummary(deps, principal, stored.record, stored.endUserId, body.template, now);
  })();
}

export function getSummary(db: Database, principal: Principal, id: string): Summary {
  const stored = findStoredSummary(db, principal, id);
  if (!stored || (principal.endUserId && stored.endUserId !== principal.endUserId)) {
    throw new ApiError("not_found", `No summary ${id}.`, { param: "id" });
  }
  return stored.record;
}

export function listSummaries(db: Database, principal: Principal, query: ListSummariesQuery): Page<Summary> {
  return listSummaryRows(db, principal, { transcriptionId: query.transcription_id, endUserId: principal.endUserId }, { limit: query.limit, cursor: query.cursor });
}
