import { createHash } from "node:crypto";
import { durableTransaction } from "../../db/durable";
import type { Deps } from "../../deps";
import { DecoderUnavailableError, UndecodableAudioError } from "../../engines/audio";
import { recordEvent } from "../../events/outbox";
import type { Tenant } from "../../tenancy";
import type { JobContracts } from "../../jobs/contracts";
import type { Job, JobQueue } from "../../jobs/queue";
import { chunksOf, ObjectTooLargeError } from "../../storage";
import { DELETE_OBJECTS_JOB, recordingPrefix } from "./objects";
import { maxUploadBytes } from "./upload-rules";
import { deleteChunkRows, listChunks } from "./chunks-store";
import { type Completion, dropCompletion, findRecording, markIntegrityFailure, markUploaded, type StoredRecording } from "./store";

export const VERIFY_UPLOAD_JOB = "recordings.verify_upload";
export type VerifyPayload = JobContracts[typeof VERIFY_UPLOAD_JOB];

/**
 * Queues the verification of a recording's accepted completion. The dedupe key makes it a
 * no-op while a job is queued or running, so it is safe to call again whenever the
 * recording is still pending: that is how a job that died after its last attempt is revived.
 */
export function enqueueVerification(queue: JobQueue, tenant: Tenant, id: string): void {
  queue.enqueue(VERIFY_UPLOAD_JOB, { project_id: tenant.projectId, mode: tenant.mode, recording_id: id } satisfies VerifyPayload, {
    dedupeKey: `verify:${id}`,
  });
}

/** The key of the object a streaming upload's chunks are stitched into (deterministic, so a rerun overwrites it). */
export function assembledKey(tenant: Tenant, id: string): string {
  return `${recordingPrefix(tenant, id)}assembled`;
}

async function sha256Of(deps: Deps, key: string): Promise<{ size: number; sha256: string }> {
  const hash = createHash("sha256");
  let size = 0;
  for await (const chunk of chunksOf(deps.storage.read(key))) {
    hash.update(chunk);
    size += chunk.byteLength;
  }
  return { size, sha256: hash.digest("hex") };
}

/** What verification reads: the staged object (null when none), chunk objects found missing, or why it cannot be used. */
type Staged = { key: string | null; lost: string[]; problem: string | null };

/**
 * Stitches a streaming upload's chunks, in order, into one object; or names the chunk objects
 * that are gone. The upload size limit applies to the whole: chunk PUTs and upload-complete
 * check the sizes they recorded, this write checks what storage actually holds.
 */
async function assemble(deps: Deps, tenant: Tenant, r: StoredRecording): Promise<Staged> {
  const key = assembledKey(tenant, r.id);
  const chunks = listChunks(deps.db, tenant, r.id);
  const lost: string[] = [];
  for (const c of chunks) if ((await deps.storage.size(c.storage_key)) === null) lost.push(c.storage_key);
  if (lost.length) return { key: null, lost, problem: null };
  async function* all() {
    for (const c of chunks) yield* chunksOf(deps.storage.read(c.storage_key));
  }
  try {
    await deps.storage.write(key, all(), { maxBytes: maxUploadBytes(deps.config) });
  } catch (err) {
    if (!(err instanceof ObjectTooLargeError)) throw err;
    return { key: null, lost: [], problem: `the chunks add up to more than the ${err.limit} bytes an upload may have` };
  }
  return { key, lost: [], problem: null };
}

function mismatch(wanted: Completion, actual: { size: number; sha256: string }): string | null {
  if (wanted.sha256 && wanted.sha256 !== actual.sha256) return `sha256 is ${actual.sha256}, not the ${wanted.sha256} the client sent`;
  if (wanted.file_size_bytes !== null && wanted.file_size_bytes !== actual.size)
    return `${actual.size} bytes arrived, not the ${wanted.file_size_bytes} the client sent`;
  return null;
}

/**
 * Step 4 of the upload flow, the verification job: whole-file hash and size of what storage holds (not of what the
 * PUT measured), then an ffmpeg probe; the outcome is one transaction (decisions 030, 035, 086). Idempotent: a
 * recording no longer awaiting verification is left alone.
 */
export async function verifyUpload(deps: Deps, tenant: Tenant, id: string): Promise<void> {
  const { db, storage, clock, queue } = deps;
  const r = findRecording(db, tenant, id);
  if (!r || r.verification !== "pending" || !r.completion) return;
  const staged: Staged = r.is_streaming ? await assemble(deps, tenant, r) : { key: r.storage_key, lost: [], problem: null };
  const stagedKey = staged.key;
  const actual = stagedKey !== null && (await storage.size(stagedKey)) !== null ? await sha256Of(deps, stagedKey) : null;
  const problem = staged.problem ?? (actual ? mismatch(r.completion, actual) : null);
  let probe = null;
  let audioError: { code: string; message: string } | null = null;
  if (stagedKey && actual && !problem) {
    try {
      probe = await storage.withLocalFile(stagedKey, (path) => deps.engines.audio.probe(path));
    } catch (err) {
      // Without a decoder the bytes are still verified by hash and size: the recording is
      // uploaded and says why its audio is unexamined (decision 086). Any other failure
      // (ffmpeg killed, storage down) passes, and is thrown for the job to retry.
      if (err instanceof UndecodableAudioError) audioError = { code: "audio_format_unsupported", message: err.message };
      else if (err instanceof DecoderUnavailableError)
        audioError = { code: "processing_error", message: `The upload is verified by size and SHA-256, but its audio could not be examined. ${err.message}` };
      else throw err;
    }
  }
  const now = clock.now();
  const gone = durableTransaction(db, () => {
    const current = findRecording(db, tenant, id);
    if (!current) return true;
    if (current.verification !== "pending") return false;
    if (problem) {
      markIntegrityFailure(db, tenant, id, { code: "upload_integrity_failed", message: `The uploaded file failed verification: ${problem}.` }, now);
      if (current.is_streaming) queue.enqueue("live.verification_failed", { project_id: tenant.projectId, mode: tenant.mode, recording_id: id });
      return false;
    }
    if (!actual || !stagedKey) {
      // The staged object is confirmed absent: the completion is dropped and a retry answers staging_missing
      // (or, for chunks, names the first chunk to upload again).
      dropCompletion(db, tenant, id, current.is_streaming, now);
      if (staged.lost.length) deleteChunkRows(db, tenant, id, staged.lost);
      return false;
    }
    const at = now.toISOString();
    markUploaded(
      db,
      tenant,
      id,
      {
        storageKey: stagedKey,
        size: actual.size,
        sha256: actual.sha256,
        durationSeconds: probe?.durationSeconds ?? null,
        format: probe?.format ?? null,
        codec: probe?.codec ?? null,
        error: audioError,
      },
      now,
    );
    if (current.is_streaming) {
      queue.enqueue(DELETE_OBJECTS_JOB, { keys: listChunks(db, tenant, id).map((c) => c.storage_key) });
      deleteChunkRows(db, tenant, id);
    }
    const endedAt = current.recorded_at && probe ? new Date(Date.parse(current.recorded_at) + probe.durationSeconds * 1000).toISOString() : null;
    recordEvent(
      deps,
      tenant,
      "recording.uploaded",
      {
        id,
        end_user_id: current.end_user_id,
        device_id: current.device_id,
        status: "uploaded",
        duration_seconds: probe?.durationSeconds ?? null,
        file_size_bytes: actual.size,
        format: probe?.format ?? null,
        started_at: current.recorded_at,
        ended_at: endedAt,
        uploaded_at: at,
      },
      now,
    );
    queue.enqueue("transcriptions.auto", { project_id: tenant.projectId, mode: tenant.mode, recording_id: id }, { dedupeKey: `transcriptions.auto:${id}` });
    return false;
  });
  // Deleted while the chunks were being stitched: the deletion job may have run before the object existed.
  if (gone && r.is_streaming && stagedKey) await storage.remove(stagedKey);
}

/** The job's handler (src/background.ts registers it). */
export function verifyUploadJob(deps: Deps) {
  return ({ payload }: Job<JobContracts[typeof VERIFY_UPLOAD_JOB]>) =>
    verifyUpload(deps, { projectId: payload.project_id, mode: payload.mode }, payload.recording_id);
}
