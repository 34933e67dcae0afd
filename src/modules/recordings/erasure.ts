import type { Deps } from "../../deps";
import { eraseEventData, recordEvent } from "../../events/outbox";
import type { Tenant } from "../../tenancy";
import { ApiError, errorBody } from "../../http/errors";
import { rewriteStoredResponses } from "../../http/idempotency";
import { enqueueWalTruncation } from "../../jobs/truncate-wal";
import { forgetDeliveryResponses } from "../webhooks/service";
import { DELETE_OBJECTS_JOB, recordingPrefix } from "./objects";
import { deleteRecordingRow, markAudioErased, type StoredRecording } from "./store";

/**
 * The one erasure of a recording (decision 133), for every path that removes one: DELETE
 * /recordings/{id}, retention (whole, or the audio alone), project deletion. Call it inside
 * the caller's transaction; the caller audits. What it removes, all of it here:
 *
 * whole:
 * - first, nothing: the recordingErased guards are asked (legal holds: 409
 *   legal_hold_active naming the hold on the recording, its end user or its device), and a
 *   refusal leaves every row and object untouched;
 * - the recording row, and with it by ON DELETE CASCADE its transcriptions (their
 *   revisions, decision 154, with them), summaries, search chunks (FTS5 and sqlite-vec drop their entries in place), uploads and chunk rows;
 * - its earlier events' data beyond ids, statuses, templates and times (pending deliveries
 *   send only that), and what webhook receivers answered to them;
 * - idempotent replays that named it: they answer 404 from now on;
 * - Ask turns that drew on it and voiceprints taken from it, and the cell codes a server holds
 *   in memory (the recordingErased handlers of ask, voices and search, modules above this one);
 * - its stored objects (original, staged uploads, chunks), by a durable job after commit;
 * - the WAL's page images of the above, by a job; secure_delete zeroes freed pages.
 * It adds the recording.deleted event.
 *
 * audio (retention past retention_audio_days, transcript kept): the same guards first; then
 * its stored objects by the same job, and the row keeps audio_erased_at. No handler runs:
 * transcripts, summaries, Ask turns and voiceprints stay, as derived content that follows
 * the transcript's retention (decision 103).
 */
export function eraseRecording(deps: Deps, tenant: Tenant, recording: StoredRecording, part: "whole" | "audio", now: Date): void {
  const erasure = { tenant, recording, part, now };
  deps.cascades.check("recordingErased", erasure);
  if (part === "whole") {
    deleteRecordingRow(deps.db, tenant, recording.id);
    forgetDeliveryResponses(deps.db, eraseEventData(deps.db, tenant, recording.id, recording.created_at));
    const gone = { status: 404, body: errorBody(new ApiError("not_found", `Recording ${recording.id} was deleted.`)) };
    rewriteStoredResponses(deps.db, tenant, recording.id, () => gone);
    deps.cascades.fire("recordingErased", erasure);
    recordEvent(deps, tenant, "recording.deleted", { id: recording.id, deleted_at: now.toISOString() }, now);
    enqueueWalTruncation(deps.queue);
  } else {
    markAudioErased(deps.db, tenant, recording.id, now.toISOString());
  }
  // Every object of the recording (original, staged uploads, chunks) lives under its prefix.
  deps.queue.enqueue(DELETE_OBJECTS_JOB, { prefix: recordingPrefix(tenant, recording.id) });
}
