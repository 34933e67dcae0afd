import type { Deps } from "../../deps";
import { DecoderInterruptedError } from "../../engines/audio";
import type { TranscribeOptions } from "../../engines/transcriber";
import { meanSpeechProbability } from "../../engines/vad";
import { recordEvent } from "../../events/outbox";
import type { JobContracts } from "../../jobs/contracts";
import type { Job } from "../../jobs/queue";
import { isOutOfSpace } from "../../storage/volumes";
import type { Tenant } from "../../tenancy";
import { resolveConfig } from "../config/service";
import { findRecording, listChunks } from "../recordings/service";
import { eventData, TRANSCRIPTION_EVENT_FIELDS, type Transcription } from "../transcriptions/schema";
import {
  findProcessingTranscription,
  findStoredTranscription,
  findTranscription,
  latestCompletedTranscription,
  markTranscriptionFailed,
  startTranscription,
} from "../transcriptions/service";
import { planAudio, toOriginalTime } from "../transcriptions/speech-plan";
import { decodeAfter, headOf, notLiveReason, sniffFormat, wavLayout } from "./decode";
import { liveSegmentsCommitted } from "./notify";
import { batchesOf, closedSpeech, cutAtLastPause, quietUntil, regionOf } from "./regions";
import { resumerOf } from "./resume";
import { provisionalSpeaker } from "./speakers";
import { warmSummaryPrompt } from "../summaries/warm";
import { advanceProgress, discardSegments, insertProgress, type LiveProgress, markWaiting, progressOf, progressOfRecording, segmentsAfter } from "./store";

const SAMPLE_RATE = 16_000;
/** Enough of the first chunk to hold a WAV's header (its fmt and the start of data). */
const WAV_HEADER_BYTES = 4096;

const tenantOf = (p: { project_id: string; mode: Tenant["mode"] }): Tenant => ({ projectId: p.project_id, mode: p.mode });
const round = (x: number) => Math.round(x * 1000) / 1000;

/**
 * A chunk was stored (io lane): the recording's live transcription starts with its first
 * chunk when the configuration transcribes automatically, then each chunk queues its
 * incremental pass on the model lane.
 */
export function liveChunkReceived(deps: Deps) {
  return ({ payload }: Job<JobContracts["live.chunk_received"]>): void => {
    const { db, clock } = deps;
    const tenant = tenantOf(payload);
    const transcriptionId = db.transaction(() => {
      const recording = findRecording(db, tenant, payload.recording_id);
      if (!recording || recording.status !== "streaming") return null;
      const live = progressOfRecording(db, tenant, recording.id);
      if (live && findProcessingTranscription(db, tenant, recording.id)?.id === live.transcription_id) return live.transcription_id;
      // A transcription already running or done (asked for by hand, or an earlier stream's) is not doubled.
      if (findProcessingTranscription(db, tenant, recording.id) || latestCompletedTranscription(db, tenant, recording.id)) return null;
      const config = resolveConfig(deps, tenant, { endUserId: recording.end_user_id, deviceId: recording.device_id });
      if (!config.auto_transcribe) return null;
      const started = startTranscription(deps, tenant, recording, config.language, clock.now(), {}, { live: true });
      insertProgress(db, tenant, started.id, recording.id, clock.now());
      return started.id;
    })();
    if (!transcriptionId) return;
    // One pass per chunk: a chunk stored while a pass runs still gets its own (a running job's key would swallow it).
    deps.queue.enqueue(
      "live.transcribe",
      { project_id: tenant.projectId, mode: tenant.mode, transcription_id: transcriptionId },
      { dedupeKey: `live.transcribe:${transcriptionId}:${payload.chunk_index}` },
    );
  };
}

/**
 * Passes over one transcription run one at a time. A job that finds a pass running asks it
 * to go round once more (for the chunk it was queued for) and ends, so a second model slot
 * is never held waiting: other recordings' work takes it. Should the process die, the
 * running pass's job is taken back at the next start and covers every chunk.
 */
const running = new Map<string, { again: boolean; stop: AbortController }>();
/** Resolved when the last pass running ends (livePassesIdle). */
let idle: PromiseWithResolvers<void> | null = null;

/**
 * Resolves once no live pass runs in this process. Summary warming waits for it before each
 * step (decision 210): a step holds the shared cores, and the next chunk's pass would wait for it.
 */
export function livePassesIdle(): Promise<void> {
  if (running.size === 0) return Promise.resolve();
  idle ??= Promise.withResolvers<void>();
  return idle.promise;
}

async function oneAtATime(id: string, work: (stopped: AbortSignal) => Promise<void>): Promise<void> {
  const current = running.get(id);
  if (current) {
    current.again = true;
    return;
  }
  const state = { again: true, stop: new AbortController() };
  running.set(id, state);
  try {
    while (state.again && !state.stop.signal.aborted) {
      state.again = false;
      await work(state.stop.signal);
    }
  } finally {
    running.delete(id);
    if (running.size === 0) {
      idle?.resolve();
      idle = null;
    }
  }
}

/**
 * The transcription is being completed (decision 193): the recording no longer streams, so
 * nothing a live pass still running does can be committed, and its transcriber call would
 * hold the cores the completion's own calls wait for. It is stopped.
 */
export function stopLivePasses(transcriptionId: string): void {
  running.get(transcriptionId)?.stop.abort(new Error("the transcription is being completed"));
}

/** The incremental pass (model lane): see livePass. */
export function liveTranscribe(deps: Deps) {
  return ({ payload, signal }: Job<JobContracts["live.transcribe"]>): Promise<void> =>
    oneAtATime(payload.transcription_id, async (stopped) => {
      try {
        await livePass(deps, tenantOf(payload), payload.transcription_id, AbortSignal.any([signal, stopped]));
      } catch (err) {
        // Stopped for the completion: nothing was left to do, which is no failure of the job.
        if (!stopped.aborted || signal.aborted) throw err;
      }
    });
}

/** The chunks 0..n-1 received without a gap: later ones wait for the gap to fill. */
function contiguous<C extends { chunk_index: number }>(chunks: C[]): C[] {
  const run: C[] = [];
  for (const c of chunks) {
    if (c.chunk_index !== run.length) break;
    run.push(c);
  }
  return run;
}

/**
 * Decodes the chunks received in order, runs voice detection over the audio after the last
 * committed point, and transcribes the regions closed by silence (the one open at the end up
 * to its last pause, then cut at the edge when the next chunk is far off, or cut at
 * MAX_REGION_SECONDS) joined in batches of one whisper window (src/modules/live/regions.ts),
 * committing each batch's segments with the new progress in one transaction. Idempotent: a
 * pass that finds the progress moved (another pass, a restart) writes nothing, and a region
 * once committed is never transcribed again.
 */
async function livePass(deps: Deps, tenant: Tenant, transcriptionId: string, signal: AbortSignal): Promise<void> {
  const { db, clock } = deps;
  const progress = progressOf(db, tenant, transcriptionId);
  const stored = findStoredTranscription(db, tenant, transcriptionId);
  if (!progress || progress.waiting || stored?.record.status !== "processing") return;
  const recording = findRecording(db, tenant, progress.recording_id);
  if (!recording || recording.status !== "streaming") return;
  const chunks = contiguous(listChunks(db, tenant, recording.id));
  if (chunks.length <= progress.chunks_used) return;
  const head = await headOf(deps, chunks[0]!.storage_key, WAV_HEADER_BYTES);
  const format = sniffFormat(head);
  if (format === null || format === "m4a") {
    markWaiting(db, transcriptionId, notLiveReason(format), clock.now());
    return;
  }
  const config = resolveConfig(deps, tenant, { endUserId: recording.end_user_id, deviceId: recording.device_id });
  const options = { language: stored.requestedLanguage ?? undefined, vocabulary: config.vocabulary, signal };
  const maxSpeakers = stored.requestedSpeakers.maxSpeakers ?? config.max_speakers ?? null;
  try {
    await transcribeNewAudio(deps, tenant, progress, { ...options, maxSpeakers }, chunks, {
      wav: format === "wav" ? wavLayout(head) : null,
      resume: resumerOf(format, head),
    });
  } catch (err) {
    if (signal.aborted || err instanceof DecoderInterruptedError || isOutOfSpace(err)) throw err;
    // A chunk re-sent while this pass read it (its replaced object deleted under the read) is
    // no reason to give up: the re-send queued its own pass, which reads the chunks as they are now.
    if (chunksMovedSince(db, tenant, recording.id, chunks)) return;
    // Provisional work only: the whole file is decoded and transcribed, and any failure reported, at completion.
    const why = err instanceof Error ? err.message : String(err);
    markWaiting(db, transcriptionId, `live transcription stopped (${why}); the recording is transcribed at completion`, clock.now());
  }
}

/** Whether any of `read` now lies in another object than the pass read it from. */
function chunksMovedSince(db: Deps["db"], tenant: Tenant, recordingId: string, read: { chunk_index: number; storage_key: string }[]): boolean {
  const now = new Map(listChunks(db, tenant, recordingId).map((c) => [c.chunk_index, c.storage_key]));
  return read.some((c) => now.get(c.chunk_index) !== c.storage_key);
}

/**
 * Seconds until the next chunk, as the device has been sending them: the time between the last
 * two received (a device streaming as it records sends a chunk per chunk of audio; one syncing a
 * backlog, back to back). Unknown, so 0, with one chunk.
 */
function expectedWait(chunks: { received_at: string }[]): number {
  const [before, last] = chunks.slice(-2);
  return before && last ? (Date.parse(last.received_at) - Date.parse(before.received_at)) / 1000 : 0;
}

/** One pass's work over the audio after the committed point (see livePass). */
async function transcribeNewAudio(
  deps: Deps,
  tenant: Tenant,
  start: LiveProgress,
  options: TranscribeOptions & { signal: AbortSignal; maxSpeakers: number | null },
  chunks: { storage_key: string; received_at: string }[],
  format: Parameters<typeof decodeAfter>[4],
): Promise<void> {
  const { engines } = deps;
  let progress = start;
  // Times in the window are seconds after this point of the recording.
  const base = progress.committed_seconds;
  const carried = { keys: progress.used_keys, digests: progress.used_digests, sizes: progress.used_sizes };
  const { pcm: window, digests, sizes } = await decodeAfter(deps, chunks, carried, base, format, options.signal);
  // A chunk sent again with the same bytes (a retry whose 200 was lost) changes nothing; other bytes do.
  const replaced = progress.used_digests.findIndex((digest, i) => digests[i] !== digest);
  if (replaced >= 0) {
    const why = `chunk ${replaced} was replaced by other bytes after it was transcribed; the recording is transcribed whole at completion`;
    markWaiting(deps.db, progress.transcription_id, why, deps.clock.now());
    return;
  }
  const windowSeconds = window.length / SAMPLE_RATE;
  const analysis = await engines.vad.analyse(window, options.signal);
  const used = { chunks_used: chunks.length, used_digests: digests, used_sizes: sizes, used_keys: chunks.map((c) => c.storage_key) };
  // The turn still going on at the end of what arrived is closed up to its last pause (decision 211),
  // and its speech after that, cut at the edge (decision 234).
  const regions = cutAtLastPause(analysis, windowSeconds);
  const { closed, until } = closedSpeech(analysis, regions, windowSeconds, expectedWait(chunks));
  let wrote = false;
  // One transcriber call per batch of closed regions, not per region: whisper's cost is per
  // 30 s window, however little of it is speech (decision 193).
  for (const batch of batchesOf(closed, until)) {
    const result = await engines.transcriber.transcribe(planAudio(batch.plan, window, SAMPLE_RATE), options);
    const speakers: (string | null)[] = [];
    let prints = progress.speaker_prints;
    for (const region of batch.regions) {
      const heard = await provisionalSpeaker(engines.diarizer, window, region, prints, options.maxSpeakers);
      speakers.push(heard.speaker);
      prints = heard.prints;
    }
    const segments = result.segments.flatMap((s) => {
      const text = s.text.trim();
      if (!text) return [];
      const start = toOriginalTime(batch.plan, Math.max(0, s.start), "start");
      const end = Math.max(start, toOriginalTime(batch.plan, s.end, "end"));
      const confidence = s.confidence ?? meanSpeechProbability(analysis, start, end);
      const speaker = speakers[regionOf(batch.regions, start, end)] ?? null;
      return [{ start: round(base + start), end: round(base + end), text, confidence: round(Math.min(1, Math.max(0, confidence))), speaker }];
    });
    const next = { ...used, committed_seconds: round(base + batch.end), language: result.language, speaker_prints: prints };
    if (!commit(deps, tenant, progress, next, segments)) return;
    wrote ||= segments.length > 0;
    progress = { ...progress, ...next };
  }
  // The quiet after the last closed region is passed over, so the next pass decodes and
  // listens from the open region (or the recent audio) only, however long the silence.
  const quiet = round(base + quietUntil(regions, windowSeconds));
  const committed = Math.max(progress.committed_seconds, quiet);
  // Also when nothing closed: the chunks are recorded as used, so one replaced by other bytes is noticed.
  if (progress.chunks_used < chunks.length || committed > progress.committed_seconds)
    commit(deps, tenant, progress, { ...used, committed_seconds: committed, language: progress.language, speaker_prints: progress.speaker_prints }, []);
  if (wrote) liveSegmentsCommitted(start.transcription_id);
  // The summary's prompt is evaluated as the transcript grows, so completion has only the rest to do (decision 206).
  // Each step waits until no live pass runs: the next chunk's pass comes first (decision 210).
  if (wrote)
    void warmSummaryPrompt(deps, tenant, start.transcription_id, () => segmentsAfter(deps.db, start.transcription_id, 0), {
      signal: options.signal,
      yieldTo: livePassesIdle,
    });
}

/** Progress and segments in one transaction, only while the stream is still live. */
function commit(
  deps: Deps,
  tenant: Tenant,
  from: LiveProgress,
  to: Parameters<typeof advanceProgress>[2],
  segments: Parameters<typeof advanceProgress>[3],
): boolean {
  const { db, clock } = deps;
  return db.transaction(() => {
    if (findStoredTranscription(db, tenant, from.transcription_id)?.record.status !== "processing") return false;
    if (findRecording(db, tenant, from.recording_id)?.status !== "streaming") return false;
    return advanceProgress(db, from, to, segments, clock.now());
  })();
}

/**
 * The streamed upload failed verification (decision 164): its provisional transcript is
 * discarded and the transcription fails, saying so; the recording keeps integrity_failure.
 */
export function liveVerificationFailed(deps: Deps) {
  return ({ payload }: Job<JobContracts["live.verification_failed"]>): void => {
    const { db, clock } = deps;
    const tenant = tenantOf(payload);
    const progress = progressOfRecording(db, tenant, payload.recording_id);
    if (!progress) return;
    const now = clock.now();
    db.transaction(() => {
      const error = {
        code: "processing_error" as const,
        message: "The streamed upload failed whole-file verification (SHA-256 or size); the provisional live transcript was discarded.",
      };
      if (!markTranscriptionFailed(db, tenant, progress.transcription_id, error, now.toISOString(), null)) return;
      discardSegments(db, progress.transcription_id);
      const record = findTranscription(db, tenant, progress.transcription_id) as Transcription;
      recordEvent(deps, tenant, "transcription.failed", eventData(record, TRANSCRIPTION_EVENT_FIELDS["transcription.failed"]), now);
    })();
  };
}
