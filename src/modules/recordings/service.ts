import type { Database } from "bun:sqlite";
import type { Deps } from "../../deps";
import type { AudioProbe } from "../../engines/audio";
import { recordEvent } from "../../events/outbox";
import { bodyField, confineToEndUser, isDevice, notFound, ownerOfRecording, PATH_ID, type Reference, visible } from "../../http/access";
import type { Principal } from "../../http/auth";
import { ApiError } from "../../http/errors";
import type { Page } from "../../http/pagination";
import { newId } from "../../ids";
import type { Tenant } from "../../tenancy";
import { findDeviceRow } from "../devices/service";
import { loadEndUser } from "../end-users/service";
import { eraseRecording } from "./erasure";
import type { CreateRecordingBody, ListRecordingsQuery, Recording } from "./schema";
import { findRecording, insertRecording, listRecordingRows, recordExaminedAudio, type StoredRecording, toRecording } from "./store";

/** What other modules (transcriptions, search and Ask) use of the recordings store: through this service, never the store itself (decision 083). */
/** The one erasure of a recording, for retention and project deletion too (decision 133). */
export { eraseRecording } from "./erasure";
export {
  endUsersOfRecordings,
  findRecording,
  listRecordingOwners,
  listRecordingsMadeBefore,
  type RecordingOwner,
  selectRecordings,
  setProcessingStatus,
  type StoredRecording,
  toRecording,
} from "./store";
export { listChunks } from "./chunks-store";

/**
 * POST /recordings. A device token fixes device_id and end_user_id (body values are
 * ignored, spec 4.3); an API key may name both, and they must exist in its project and mode
 * (and the end user must not be deleted).
 */
export function createRecording(deps: Deps, principal: Principal, body: CreateRecordingBody, now: Date): Recording {
  const { db } = deps;
  const byDevice = isDevice(principal);
  const endUserId = byDevice ? principal.endUserId : confineToEndUser(principal, body.end_user_id);
  const deviceId = byDevice ? principal.deviceId : (body.device_id ?? null);
  if (!byDevice && endUserId) {
    const endUser = loadEndUser(db, principal, endUserId, bodyField("end_user_id"));
    // Spec 2.2: a deleted end user is read-only, so nothing new is recorded for it. (Its devices' tokens were revoked with it.)
    if (endUser.deleted_at)
      throw new ApiError("resource_conflict", `End user ${endUserId} is deleted; no recordings can be added to it.`, { param: "end_user_id" });
  }
  if (!byDevice && deviceId && !findDeviceRow(db, principal, deviceId)) {
    throw new ApiError("resource_not_found", notFound.device(deviceId), { param: "device_id" });
  }
  const at = now.toISOString();
  const recording: Recording = {
    id: newId("rec_", now.getTime()),
    end_user_id: endUserId,
    device_id: deviceId,
    name: body.name ?? null,
    status: "pending",
    duration_seconds: null,
    file_size_bytes: null,
    recorded_at: body.recorded_at ? new Date(body.recorded_at).toISOString() : null,
    metadata: body.metadata ?? {},
    upload_method: body.upload_method ?? null,
    source: body.source ?? (byDevice ? "device" : "api_upload"),
    mime_type: body.mime_type ?? null,
    is_streaming: false,
    chunk_count: 0,
    consent_obtained: body.consent_obtained ?? null,
    format: null,
    codec: null,
    sha256: null,
    error: null,
    uploaded_at: null,
    created_at: at,
    updated_at: at,
  };
  db.transaction(() => {
    insertRecording(db, principal, recording);
    recordEvent(
      deps,
      principal,
      "recording.created",
      {
        id: recording.id,
        end_user_id: recording.end_user_id,
        device_id: recording.device_id,
        status: "created",
        consent_obtained: recording.consent_obtained,
        metadata: recording.metadata,
        created_at: recording.created_at,
      },
      now,
    );
  })();
  return recording;
}

/**
 * The one loader of "a recording this caller may see" (decision 084), for every module: its
 * project and mode, and for an end-user-scoped key its end user, for a device token its
 * device. Anything else is 404, never 403, so ids of others are not confirmed. `ref` says
 * how the id was given: in the path (`not_found`, param id) or as a body field.
 */
/**
 * Fills in the length and format of a recording whose upload was verified while no decoder
 * could run (decision 086), once a later decode of it succeeded; a no-op for one already
 * examined or gone.
 */
export function fillExaminedAudio(db: Database, tenant: Tenant, id: string, audio: AudioProbe, now: Date): void {
  db.transaction(() => {
    const r = findRecording(db, tenant, id);
    if (r && r.format === null && r.storage_key) recordExaminedAudio(db, tenant, id, audio, now);
  })();
}

export function loadRecording(db: Database, principal: Principal, id: string, ref: Reference = PATH_ID): StoredRecording {
  return visible(principal, findRecording(db, principal, id), ownerOfRecording, notFound.recording(id), ref);
}

export function getRecording(db: Database, principal: Principal, id: string): Recording {
  return toRecording(loadRecording(db, principal, id));
}

export function listRecordings(db: Database, principal: Principal, q: ListRecordingsQuery): Page<Recording> {
  return listRecordingRows(
    db,
    principal,
    {
      endUserId: confineToEndUser(principal, q.end_user_id),
      deviceId: q.device_id,
      status: q.status,
      recordedAfter: q.recorded_after,
      recordedBefore: q.recorded_before,
    },
    { limit: q.limit, cursor: q.cursor },
  );
}

/** DELETE /recordings/{id}: the one erasure (erasure.ts says what goes), audited, in one transaction. */
export function deleteRecording(deps: Deps, principal: Principal, id: string, now: Date): void {
  deps.db.transaction(() => {
    eraseRecording(deps, principal, loadRecording(deps.db, principal, id), "whole", now);
    deps.audit.record(principal, principal, "recording.delete", [id]);
  })();
}
