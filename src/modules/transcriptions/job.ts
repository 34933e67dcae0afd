import { DecoderInterruptedError, DecoderUnavailableError, UndecodableAudioError } from "../../engines/audio";
import type { SpeakerCountHint } from "../../engines/diarizer";
import { MissingModelError } from "../../engines/missing-model";
import { UnsupportedLanguageError } from "../../engines/whisper-languages";
import type { Deps } from "../../deps";
import { recordEvent } from "../../events/outbox";
import { isOutOfSpace } from "../../storage/volumes";
import type { Tenant } from "../../tenancy";
import type { Job } from "../../jobs/queue";
import { resolveConfig } from "../config/service";
import { fillExaminedAudio, findRecording, setProcessingStatus, type StoredRecording } from "../recordings/service";
import { llmPassRuns } from "../redaction/service";
import { announceCompleted } from "./completed-event";
import { transcriberModelSha256 } from "./model-digest";
import { knownVoices } from "../voices/service";
import { type EarlierWork, type PipelineResult, SAMPLE_RATE, TranscriptionFailure, transcribePcm } from "./pipeline";
import { eventData, TRANSCRIPTION_EVENT_FIELDS, type Transcription } from "./schema";
import { HAS_AUDIO, RUN_TRANSCRIPTION_JOB, type RunTranscriptionPayload, startTranscription } from "./service";
import {
  findProcessingTranscription,
  findStoredTranscription,
  findTranscription,
  hasTranscription,
  latestCompletedTranscription,
  markTranscriptionCompleted,
  markTranscriptionFailed,
  type StoredTranscription,
} from "./store";
import { diedTooOften, limitFor, TimeLimitError, withTimeLimit } from "./time-limit";

/** Enqueued by the recordings module when a recording's upload is verified (contract 3). */
export const AUTO_TRANSCRIBE_JOB = "transcriptions.auto";

type RecordingPayload = { project_id: string; mode: Tenant["mode"]; recording_id: string };

const tenantOf = (p: { project_id: string; mode: Tenant["mode"] }): Tenant => ({ projectId: p.project_id, mode: p.mode });

/** The spec 6 failure an error stands for; anything unexpected is processing_error. */
function toFailure(err: unknown): TranscriptionFailure {
  if (err instanceof TranscriptionFailure) return err;
  if (err instanceof TimeLimitError) return new TranscriptionFailure("timeout", err.message);
  if (err instanceof UndecodableAudioError) return new TranscriptionFailure("audio_format_unsupported", `The audio could not be decoded: ${err.message}`);
  // Their messages are written for the reader (the install command, the setting, the languages to use).
  if (err instanceof MissingModelError || err instanceof DecoderUnavailableError || err instanceof UnsupportedLanguageError)
    return new TranscriptionFailure("processing_error", err.message);
  // An engine that crashed: the operator's first step is the check of every engine.
  return new TranscriptionFailure(
    "processing_error",
    `Transcription failed: ${err instanceof Error ? err.message : String(err)}. Check the engines with: parley doctor.`,
  );
}

/**
 * A recording verified while no decoder could run has no length or format (decision 086):
 * now that its audio decoded, examine it. Its transcription does not depend on this, so a
 * probe that fails is logged, not failed.
 */
async function examineLate(deps: Deps, tenant: Tenant, recording: StoredRecording, path: string): Promise<void> {
  if (recording.format !== null) return;
  try {
    fillExaminedAudio(deps.db, tenant, recording.id, await deps.engines.audio.probe(path), deps.clock.now());
  } catch (err) {
    deps.log.warn("recording decoded but not examined", { recording_id: recording.id, error: err instanceof Error ? err.message : String(err) });
  }
}

/** The request's speaker counts, else the configuration nearest the recording's (decision 097). */
function speakerHint(deps: Deps, tenant: Tenant, stored: StoredTranscription, recording: StoredRecording): SpeakerCountHint {
  const { minSpeakers, maxSpeakers } = stored.requestedSpeakers;
  if (minSpeakers != null || maxSpeakers != null) return stored.requestedSpeakers;
  const config = resolveConfig(deps, tenant, { endUserId: recording.end_user_id, deviceId: recording.device_id });
  return { minSpeakers: config.min_speakers, maxSpeakers: config.max_speakers };
}

/**
 * The start of a transcription already transcribed, for the whole-file run to reuse: the live
 * module's (decision 173), handed in by src/background.ts so this module does not import it
 * (live builds on transcriptions). Null when there is none, or the verified file `key` is
 * not what it was made from.
 */
export type EarlierWorkOf = (deps: Deps, tenant: Tenant, transcriptionId: string, key: string) => Promise<EarlierWork | null>;

async function transcribeRecording(
  deps: Deps,
  tenant: Tenant,
  stored: StoredTranscription,
  recording: StoredRecording,
  cancel: AbortSignal,
  earlierWorkOf: EarlierWorkOf,
): Promise<PipelineResult> {
  if (recording.error?.code === "audio_format_unsupported") throw new TranscriptionFailure("audio_format_unsupported", recording.error.message);
  const key = recording.storage_key;
  if (!key) throw new TranscriptionFailure("processing_error", `Recording ${recording.id} has no stored audio.`);
  const processing = deps.config.processing;
  // Until the audio is decoded its length is unknown: the fixed allowance covers decoding.
  // Time queued behind another job's engine call is left out of the limit (PARLEY_JOB_CONCURRENCY > 1).
  return withTimeLimit(
    limitFor(processing, 0),
    async ({ signal, setLimit, excludeWait }) => {
      const pcm = await deps.storage.withLocalFile(key, async (path) => {
        const decoded = await deps.engines.audio.decodePcm16k(path, signal);
        await examineLate(deps, tenant, recording, path);
        return decoded;
      });
      setLimit(limitFor(processing, pcm.length / SAMPLE_RATE));
      // A streamed recording's live transcript, when the verified file is what it was made from (decision 173).
      const earlier = (await earlierWorkOf(deps, tenant, stored.record.id, key)) ?? undefined;
      return transcribePcm(deps.engines, pcm, {
        earlier,
        language: stored.requestedLanguage,
        // The vocabulary nearest the recording (decision 158), read when it is transcribed.
        vocabulary: resolveConfig(deps, tenant, { endUserId: recording.end_user_id, deviceId: recording.device_id }).vocabulary,
        signal,
        excludeWait,
        speakers: speakerHint(deps, tenant, stored, recording),
        voices: knownVoices(deps.db, tenant, deps.engines.diarizer.kind, recording.end_user_id),
      });
    },
    cancel,
  );
}

/**
 * processing -> completed: the event, and in the same transaction the jobs other modules
 * take it from (contracts in src/jobs/contracts.ts): search indexes it, and summaries
 * starts the configured summary. With the local LLM installed, redaction's model pass
 * follows; when webhook payloads are redacted, the event and the summary wait for it, so
 * they are redacted with what it finds (decision 108).
 */
function complete(
  deps: Deps,
  tenant: Tenant,
  stored: StoredTranscription,
  recording: StoredRecording,
  result: PipelineResult & { model_sha256: string | null },
): void {
  const { db, clock } = deps;
  const now = clock.now();
  db.transaction(() => {
    if (!markTranscriptionCompleted(db, tenant, stored.record.id, { ...result, completed_at: now.toISOString() })) return;
    setProcessingStatus(db, tenant, recording.id, { status: "completed" }, now);
    const record = findTranscription(db, tenant, stored.record.id) as Transcription;
    const config = resolveConfig(deps, tenant, { endUserId: recording.end_user_id, deviceId: recording.device_id });
    const job = { project_id: tenant.projectId, mode: tenant.mode, transcription_id: record.id };
    deps.queue.enqueue("search.index_transcription", job, { dedupeKey: `search.index_transcription:${record.id}` });
    const pass = llmPassRuns(deps);
    const announceLater = pass && config.redact_webhook_payloads;
    if (pass)
      deps.queue.enqueue("transcriptions.redaction_pass", { ...job, announce: announceLater }, { dedupeKey: `transcriptions.redaction_pass:${record.id}` });
    if (!announceLater) announceCompleted(deps, tenant, record, config, now);
  })();
}

/**
 * The failures that are the audio's own: the recording fails with them. Any other (a model
 * not installed, no decoder, an engine that crashed, the time limit) is the appliance's: the
 * audio is safe, so only the transcription fails and the recording is as it was before it
 * started, `completed` when an earlier transcription stands, else `uploaded` (decision 129).
 */
export const AUDIO_FAILURES: ReadonlySet<string> = new Set(["audio_format_unsupported", "audio_too_short", "audio_quality_insufficient"]);

function fail(deps: Deps, tenant: Tenant, stored: StoredTranscription, failure: TranscriptionFailure): void {
  const { db, clock } = deps;
  const now = clock.now();
  db.transaction(() => {
    const error = { code: failure.code, message: failure.message };
    if (!markTranscriptionFailed(db, tenant, stored.record.id, error, now.toISOString(), failure.durationSeconds)) return;
    const recordingId = stored.record.recording_id;
    if (AUDIO_FAILURES.has(error.code)) setProcessingStatus(db, tenant, recordingId, { status: "failed", error }, now);
    else setProcessingStatus(db, tenant, recordingId, { status: latestCompletedTranscription(db, tenant, recordingId) ? "completed" : "uploaded" }, now);
    const record = findTranscription(db, tenant, stored.record.id) as Transcription;
    recordEvent(deps, tenant, "transcription.failed", eventData(record, TRANSCRIPTION_EVENT_FIELDS["transcription.failed"]), now);
  })();
}

/**
 * The transcription job. Idempotent: a transcription no longer processing (a second run
 * after a crash, or a deleted recording) is left alone, and the final update is
 * conditional on status processing, so events and follow-up jobs happen once.
 */
export function runTranscription(deps: Deps, earlierWorkOf: EarlierWorkOf) {
  return async (job: Job<RunTranscriptionPayload>): Promise<void> => {
    const tenant = tenantOf(job.payload);
    const stored = findStoredTranscription(deps.db, tenant, job.payload.transcription_id);
    if (!stored || stored.record.status !== "processing") return;
    const recording = findRecording(deps.db, tenant, stored.record.recording_id);
    if (!recording) return;
    const interrupted = diedTooOften(job);
    if (interrupted) return fail(deps, tenant, stored, new TranscriptionFailure("processing_error", interrupted));
    try {
      const started = performance.now();
      const result = await transcribeRecording(deps, tenant, stored, recording, job.signal, earlierWorkOf);
      // The real-time factor of GET /metrics: wall time to decode and transcribe over audio length.
      deps.metrics.observeTranscription(result.duration_seconds, (performance.now() - started) / 1000);
      const model_sha256 = await transcriberModelSha256(deps.config.modelsDir, result.model);
      complete(deps, tenant, stored, recording, { ...result, model_sha256 });
    } catch (err) {
      // Cut off by the server stopping (or its decoder by the service manager stopping every
      // process at once), or a full disk (the appliance's fault, not the recording's): no
      // failure of the transcription; the queue runs it again.
      if (job.signal.aborted || err instanceof DecoderInterruptedError || isOutOfSpace(err)) throw err;
      const failure = toFailure(err);
      if (failure.code === "processing_error") deps.log.warn("transcription failed", { transcription_id: stored.record.id, error: failure.message });
      fail(deps, tenant, stored, failure);
    }
  };
}

/**
 * Auto-transcription after upload: the configuration nearest the recording (device, end
 * user, project, organization) decides. Only a recording's first transcription starts
 * here, so a repeated job (or a caller who got there first) starts nothing more.
 */
export function autoTranscribe(deps: Deps) {
  return (job: Job<RecordingPayload>): void => {
    const { db } = deps;
    const tenant = tenantOf(job.payload);
    const recording = findRecording(db, tenant, job.payload.recording_id);
    if (!recording || !HAS_AUDIO.has(recording.status)) return;
    // A live transcription (issue 30) started while the recording streamed: its whole-file run starts now.
    const live = findProcessingTranscription(db, tenant, recording.id);
    if (live) {
      db.transaction(() => {
        setProcessingStatus(db, tenant, recording.id, { status: "processing" }, deps.clock.now());
        const payload = { project_id: tenant.projectId, mode: tenant.mode, transcription_id: live.id };
        deps.queue.enqueue(RUN_TRANSCRIPTION_JOB, payload, { dedupeKey: `${RUN_TRANSCRIPTION_JOB}:${live.id}` });
      })();
      return;
    }
    const config = resolveConfig(deps, tenant, { endUserId: recording.end_user_id, deviceId: recording.device_id });
    if (!config.auto_transcribe) return;
    db.transaction(() => {
      if (!hasTranscription(db, tenant, recording.id)) startTranscription(deps, tenant, recording, config.language, deps.clock.now());
    })();
  };
}

/** Registers the pipeline's transcription jobs on the queue. */
