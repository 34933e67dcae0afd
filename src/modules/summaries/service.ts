import type { Database } from "bun:sqlite";
import type { Deps } from "../../deps";
import { recordEvent } from "../../events/outbox";
import { bodyField, confineToEndUser, notFound, ownedBy, visible } from "../../http/access";
import type { Principal } from "../../http/auth";
import type { Tenant } from "../../tenancy";
import { ApiError } from "../../http/errors";
import type { Page } from "../../http/pagination";
import { newId } from "../../ids";
import type { JobContracts } from "../../jobs/contracts";
import { eventData, type Transcription } from "../transcriptions/schema";
import { endUsersOfRecordings } from "../recordings/service";
import { identifiersFound, redactSummary } from "../redaction/service";
import { findStoredTranscription } from "../transcriptions/service";
import { type CreateSummaryBody, type ListSummariesQuery, SUMMARY_EVENT_FIELDS, type Summary, type TemplateName } from "./schema";
import { findStoredSummary, findSummaryByTemplate, insertSummary, listSummaryRows, restartSummary } from "./store";
import { TEMPLATES } from "./templates";

/** What exports use of the summaries store: through this service (decision 083). */
export { listSummaryRows } from "./store";

export const RUN_SUMMARY_JOB = "summaries.run";
export type RunSummaryPayload = JobContracts[typeof RUN_SUMMARY_JOB];

/**
 * Starts the summary of a completed transcription with a template: a new summary, or the
 * existing one for that transcription and template re-run under the same id (its earlier
 * result is replaced). Records summary.started and enqueues the job. Call inside a transaction.
 */
export function startSummary(
  deps: Pick<Deps, "db" | "queue" | "events">,
  tenant: Tenant,
  transcription: Transcription,
  endUserId: string | null,
  templateName: TemplateName,
  now: Date,
): Summary {
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
        sections: null,
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
    const stored = visible(
      principal,
      findStoredTranscription(db, principal, body.transcription_id),
      (t) => ownedBy(t.endUserId),
      notFound.transcription(body.transcription_id),
      bodyField("transcription_id"),
    );
    if (stored.record.status !== "completed") {
      throw new ApiError(
        "transcription_not_ready",
        `Transcription ${stored.record.id} is ${stored.record.status}; only a completed transcription can be summarised.`,
        {
          param: "transcription_id",
        },
      );
    }
    return startSummary(deps, principal, stored.record, stored.endUserId, body.template, now);
  })();
}

/** A summary the caller may see; with `redacted`, identifiers (rules, and the model's pass over its transcription when it ran) replaced by their kind. The read is audited, the original and the redacted view apart. */
export async function getSummary(deps: Pick<Deps, "db" | "audit">, principal: Principal, id: string, options: { redacted?: boolean } = {}): Promise<Summary> {
  const stored = visible(principal, findStoredSummary(deps.db, principal, id), (s) => ownedBy(s.endUserId), notFound.summary(id));
  const summary = stored.record;
  await deps.audit.access(principal, options.redacted ? "summary.redacted.read" : "summary.read", summaryResources(summary), { endUsers: [stored.endUserId] });
  return options.redacted ? redactSummary(summary, identifiersFound(deps.db, principal, summary.transcription_id)) : summary;
}

/** A page of summaries, text included: the read of every one on it is audited. */
export async function listSummaries(deps: Pick<Deps, "db" | "audit">, principal: Principal, query: ListSummariesQuery): Promise<Page<Summary>> {
  const page = listSummaryRows(
    deps.db,
    principal,
    { transcriptionId: query.transcription_id, endUserId: confineToEndUser(principal) },
    { limit: query.limit, cursor: query.cursor },
  );
  if (page.data.length > 0)
    await deps.audit.access(principal, "summary.read", page.data.flatMap(summaryResources), {
      endUsers: endUsersOfRecordings(
        deps.db,
        principal,
        page.data.map((s) => s.recording_id),
      ),
    });
  return page;
}

const summaryResources = (s: Summary) => [s.id, s.transcription_id, s.recording_id];
