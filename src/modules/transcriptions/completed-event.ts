import type { Deps } from "../../deps";
import { recordEvent } from "../../events/outbox";
import type { Tenant } from "../../tenancy";
import type { ResolvedConfig } from "../config/schema";
import { identifiersFound, redactTranscript } from "../redaction/service";
import { eventData, TRANSCRIPTION_EVENT_FIELDS, type Transcription } from "./schema";

/** transcription.completed (redacted as the configuration asks) and the summary it asks for. Inside the caller's transaction. */
export function announceCompleted(deps: Pick<Deps, "db" | "queue" | "events">, tenant: Tenant, record: Transcription, config: ResolvedConfig, now: Date): void {
  const payload = config.redact_webhook_payloads ? redactTranscript(record, identifiersFound(deps.db, tenant, record.id)) : record;
  recordEvent(deps, tenant, "transcription.completed", eventData(payload, TRANSCRIPTION_EVENT_FIELDS["transcription.completed"]), now);
  const job = { project_id: tenant.projectId, mode: tenant.mode, transcription_id: record.id };
  if (config.auto_summarize) deps.queue.enqueue("summaries.auto", { ...job, template: config.summary_template }, { dedupeKey: `summaries.auto:${record.id}` });
}
