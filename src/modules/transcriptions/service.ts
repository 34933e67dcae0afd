import type { Database } from "bun:sqlite";
import type { Deps } from "../../deps";
import { recordEvent } from "../../events/outbox";
import { bodyField, confineToEndUser, notFound, ownedBy, visible } from "../../http/access";
import type { Principal } from "../../http/auth";
import type { Disclosed } from "../audit/service";
import type { Tenant } from "../../tenancy";
import { ApiError } from "../../http/errors";
import type { Page } from "../../http/pagination";
import type { SpeakerCountHint } from "../../engines/diarizer";
import { whisperLanguage } from "../../engines/whisper-languages";
import { newId } from "../../ids";
import type { JobContracts } from "../../jobs/contracts";
import { endUsersOfRecordings, findRecording, loadRecording, setProcessingStatus } from "../recordings/service";
import { identifiersFound, redactTranscript } from "../redaction/service";
import { type CreateTranscriptionBody, eventData, type ListTranscriptionsQuery, TRANSCRIPTION_EVENT_FIELDS, type Transcription } from "./schema";
import { RENDERERS, TRANSCRIPT_FORMATS, type TranscriptFormat } from "./renderings";
import { findRevision } from "./revisions-store";
import { findProcessingTranscription, findStoredTranscription, insertTranscription, listTranscriptionRows, type StoredTranscription } from "./store";

/** What other modules (summaries, search and Ask) use of the transcriptions store: through this service, never the store itself (decision 083). */
export {
  findProcessingTranscription,
  findStoredTranscription,
  findTranscription,
  latestCompletedTranscription,
  listTranscriptionRows,
  markTranscriptionFailed,
  type StoredTranscription,
} from "./store";

export const RUN_TRANSCRIPTION_JOB = "transcriptions.run";
export type RunTranscriptionPayload = JobContracts[typeof RUN_TRANSCRIPTION_JOB];

/** Recording statuses from which audio is stored and verified (spec 3.3): everything from uploaded on. */
export const HAS_AUDIO = new Set(["uploaded", "processing", "completed", "failed"]);

type RecordingRef = { id: string; end_user_id: string | null };

/**
 * Inserts a transcription in status processing (the recording too), records
 * transcription.started and enqueues its job. Call inside a transaction: all happen or none.
 */
export function startTranscription(
  deps: Pick<Deps, "db" | "queue" | "events">,
  tenant: Tenant,
  recording: RecordingRef,
  requested: string | null,
  now: Date,
  requestedSpeakers: SpeakerCountHint = {},
  options: { live?: boolean } = {},
): Transcription {
  const at = now.toISOString();
  // A regional tag is transcribed as its language (pt-BR as pt), so that is what is recorded.
  // A value whisper does not know (configured before languages were checked) is kept as
  // given: the job then fails naming it.
  const language = requested === null ? null : (whisperLanguage(requested) ?? requested);
  const transcription: Transcription = {
    id: newId("txn_", now.getTime()),
    recording_id: recording.id,
    status: "processing",
    language,
    text: null,
    duration_seconds: null,
    segments: [],
    speakers: [],
    speaker_turns: [],
    error: null,
    model: null,
    diarization: null,
    revision: 0,
    created_at: at,
    started_at: at,
    completed_at: null,
    failed_at: null,
  };
  insertTranscription(deps.db, tenant, transcription, { endUserId: recording.end_user_id, requestedLanguage: language, requestedSpeakers });
  recordEvent(deps, tenant, "transcription.started", eventData(transcription, TRANSCRIPTION_EVENT_FIELDS["transcription.started"]), now);
  // A live one (issue 30) starts while the recording still streams: the recording keeps its
  // status, and the whole-file job is queued at completion (autoTranscribe), not now.
  if (options.live) return transcription;
  setProcessingStatus(deps.db, tenant, recording.id, { status: "processing" }, now);
  const payload: RunTranscriptionPayload = { project_id: tenant.projectId, mode: tenant.mode, transcription_id: transcription.id };
  deps.queue.enqueue(RUN_TRANSCRIPTION_JOB, payload, { dedupeKey: `${RUN_TRANSCRIPTION_JOB}:${transcription.id}` });
  return transcription;
}

/** POST /transcriptions: a new transcription of the recording (reprocessing keeps the earlier ones). */
export function createTranscription(
  deps: Pick<Deps, "db" | "queue" | "events">,
  principal: Principal,
  body: CreateTranscriptionBody,
  now: Date,
): Transcription {
  const { db } = deps;
  return db.transaction(() => {
    const recording = loadRecording(db, principal, body.recording_id, bodyField("recording_id"));
    if (!HAS_AUDIO.has(recording.status)) {
      throw new ApiError("resource_conflict", `Recording ${recording.id} has no uploaded audio yet (status ${recording.status}).`, { param: "recording_id" });
    }
    if (recording.audio_erased_at) {
      throw new ApiError("resource_conflict", `The audio of recording ${recording.id} was erased by retention; it cannot be transcribed again.`, {
        param: "recording_id",
      });
    }
    const running = findProcessingTranscription(db, principal, recording.id);
    if (running) {
      throw new ApiError(
        "resource_conflict",
        `Transcription ${running.id} of recording ${recording.id} is still processing; reprocess it once that one has ended.`,
        {
          param: "recording_id",
        },
      );
    }
    return startTranscription(deps, principal, recording, body.language ?? null, now, { minSpeakers: body.min_speakers, maxSpeakers: body.max_speakers });
  })();
}

/** A transcription the caller may see (end-user-scoped keys: only their end user's) with what the API does not show, unaudited. */
export function findVisibleStoredTranscription(db: Database, principal: Principal, id: string): StoredTranscription {
  return visible(principal, findStoredTranscription(db, principal, id), (t) => ownedBy(t.endUserId), notFound.transcription(id));
}

/** A transcription the caller may see, unaudited: for writes that load it inside their transaction. */
export function findVisibleTranscription(db: Database, principal: Principal, id: string): Transcription {
  return findVisibleStoredTranscription(db, principal, id).record;
}

/** The transcription as it was at revision `n` (the latest when absent): 404 not_found for a revision it never had. */
export function atRevision(db: Database, tenant: Tenant, transcription: Transcription, n: number | undefined): Transcription {
  if (n === undefined || n === transcription.revision) return transcription;
  const kept = n < transcription.revision ? findRevision(db, tenant, transcription.id, n) : null;
  if (!kept) {
    throw new ApiError("not_found", `Transcription ${transcription.id} has no revision ${n}; its latest is ${transcription.revision}.`, { param: "revision" });
  }
  return { ...transcription, ...kept.content, revision: n };
}

/** Whose content a transcription is, for the audit row of a read or an export of it (the accounting of disclosures). */
export function disclosedIn(db: Database, tenant: Tenant, transcription: Pick<Transcription, "recording_id">): Disclosed {
  return { endUsers: endUsersOfRecordings(db, tenant, [transcription.recording_id]) };
}

/** A transcription the caller may see (end-user-scoped keys: only their end user's), at `revision` when given (404 for one it never had); with `redacted`, identifiers (rules, and the model's pass when it ran) replaced by their kind. The read is audited, the original and the redacted view apart. */
export async function getTranscription(
  deps: Pick<Deps, "db" | "audit">,
  principal: Principal,
  id: string,
  options: { redacted?: boolean; revision?: number } = {},
): Promise<Transcription> {
  const transcription = atRevision(deps.db, principal, findVisibleTranscription(deps.db, principal, id), options.revision);
  await deps.audit.access(principal, options.redacted ? "transcription.redacted.read" : "transcription.read", [transcription.id, transcription.recording_id], {
    endUsers: endUsersOfRecordings(deps.db, principal, [transcription.recording_id]),
  });
  return options.redacted ? redactTranscript(transcription, identifiersFound(deps.db, principal, transcription.id)) : transcription;
}

/** GET /transcriptions/{id}/transcript: the finished transcript as SRT, WebVTT or text, with speaker names; audited as a read. */
export async function renderTranscript(
  deps: Pick<Deps, "db" | "audit">,
  principal: Principal,
  id: string,
  format: TranscriptFormat,
): Promise<{ body: string; contentType: string }> {
  const transcription = await getTranscription(deps, principal, id);
  if (transcription.status !== "completed") {
    throw new ApiError("transcription_not_ready", `Transcription ${id} is ${transcription.status}; a transcript is rendered once it has completed.`);
  }
  return { body: RENDERERS[format](transcription), contentType: `${TRANSCRIPT_FORMATS[format]}; charset=utf-8` };
}

/** A page of transcriptions, text included: the read of every one on it is audited. */
export async function listTranscriptions(deps: Pick<Deps, "db" | "audit">, principal: Principal, query: ListTranscriptionsQuery): Promise<Page<Transcription>> {
  const page = listTranscriptionRows(
    deps.db,
    principal,
    { recordingId: query.recording_id, endUserId: confineToEndUser(principal) },
    { limit: query.limit, cursor: query.cursor },
  );
  if (page.data.length > 0)
    await deps.audit.access(
      principal,
      "transcription.read",
      page.data.flatMap((t) => [t.id, t.recording_id]),
      {
        endUsers: endUsersOfRecordings(
          deps.db,
          principal,
          page.data.map((t) => t.recording_id),
        ),
      },
    );
  return page;
}
