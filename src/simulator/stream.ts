import { createHash, randomUUID } from "node:crypto";
import type { ApiClient } from "./client";

/** How a recording is streamed: its pace, and how much audio each chunk holds. */
export type StreamPace = {
  /** 1 sends each chunk when its audio has been recorded (real time); 10 ten times as fast. */
  speed: number;
  /** Seconds of audio per chunk (decision 176: by time, not by streaming_chunk_kb, for the samples' low bitrate). */
  chunkSeconds: number;
};

export const REAL_TIME: StreamPace = { speed: 1, chunkSeconds: 2 };

export type StreamedRecording = { recordingId: string; chunks: number; bytes: number; sha256: string };

type Hooks = {
  /** Ends the recording early: what was sent so far is completed as the recording (a wearer pressing stop). */
  stop?: AbortSignal;
  /** Called once the recording exists, before its first chunk. */
  onCreated?: (recordingId: string) => void;
  /** Called once per chunk the server acknowledged (200), for counters. */
  onChunk?: (index: number) => void;
  /** How long the server may stay unreachable before the stream gives up (default a minute). */
  patienceMs?: number;
};

/** The server did not answer (refused, reset, a 5xx while it starts) or is still verifying: ask again; anything else is an error. */
class TryAgain extends Error {}

const RETRY_MS = 200;

/**
 * Uploads `audio` the way streaming firmware does (decision 033): the recording is created,
 * then chunk k (the bytes of its `chunkSeconds` of audio) is sent once that audio has been
 * recorded, at `speed` times real time, and the whole file's SHA-256 completes it. A chunk
 * is sent again until the server acknowledges it, so a server that restarts mid-stream
 * (kill -9 included) loses nothing: the device keeps what was not acknowledged, like firmware
 * keeps its flash. Chunks are cut at byte offsets, not at frames: the server decodes the
 * prefix it has (decision 162).
 */
export async function streamRecording(
  api: ApiClient,
  token: string,
  audio: Uint8Array<ArrayBuffer>,
  durationSeconds: number,
  create: Record<string, unknown>,
  pace: StreamPace,
  hooks: Hooks = {},
): Promise<StreamedRecording> {
  const patience = hooks.patienceMs ?? 60_000;
  // One key for every try: a create whose 201 was lost answers the same recording again.
  const idempotencyKey = randomUUID();
  const rec = await persist(patience, () => ok(api.call("POST", "/v1/recordings", token, create, { "idempotency-key": idempotencyKey })));
  hooks.onCreated?.(rec.id);
  const count = Math.max(1, Math.ceil(durationSeconds / pace.chunkSeconds));
  const started = performance.now();
  let sent = 0;
  let chunks = 0;
  for (let k = 0; k < count; k++) {
    // Chunk k holds the audio up to (k + 1) * chunkSeconds (bytes in proportion): it exists once that has been recorded.
    const upTo = Math.min(durationSeconds, (k + 1) * pace.chunkSeconds);
    const due = started + (upTo * 1000) / pace.speed;
    // Stopped: what was recorded is sent; even a stop at once has recorded the first chunk.
    if ((await stoppedBefore(due, hooks.stop)) && k > 0) break;
    const end = k === count - 1 ? audio.length : Math.round((audio.length * upTo) / durationSeconds);
    const bytes = audio.subarray(sent, end);
    await persist(patience, () => sendChunk(api, token, rec.id, k, bytes, create.mime_type as string | undefined));
    hooks.onChunk?.(k);
    sent = end;
    chunks++;
  }
  const whole = audio.subarray(0, sent);
  const sha256 = createHash("sha256").update(whole).digest("hex");
  await persist(patience, async () => {
    const done = await reach(api.call("POST", `/v1/recordings/${rec.id}/upload-complete`, token, { sha256, file_size_bytes: whole.length }));
    // 425: verification runs; asking again is how a device learns the outcome.
    if (done.status === 425) throw new TryAgain("verifying");
    if (done.status !== 200) throw new Error(`upload-complete answered ${done.status}: ${JSON.stringify(done.body)}`);
  });
  return { recordingId: rec.id, chunks, bytes: whole.length, sha256 };
}

async function sendChunk(
  api: ApiClient,
  token: string,
  recordingId: string,
  index: number,
  bytes: Uint8Array<ArrayBuffer>,
  contentType?: string,
): Promise<void> {
  // Upload URLs are single-use: every try asks for a fresh one.
  const target = await ok(
    api.call("POST", `/v1/recordings/${recordingId}/upload-url`, token, { chunk_index: index, file_size_bytes: bytes.length, content_type: contentType }),
  );
  const put = await fetch(target.upload_url, { method: "PUT", headers: target.headers, body: bytes }).catch((err) => {
    throw new TryAgain(String(err));
  });
  await put.arrayBuffer().catch(() => {});
  if (put.status >= 500) throw new TryAgain(`PUT answered ${put.status}`);
  if (!put.ok) throw new Error(`PUT of chunk ${index} answered ${put.status}`);
}

/** A call that may meet a server that is down: a network error or 5xx becomes TryAgain. */
async function reach<T>(call: Promise<T & { status: number }>): Promise<T & { status: number }> {
  const r = await call.catch((err) => {
    throw new TryAgain(String(err));
  });
  if (r.status >= 500) throw new TryAgain(`answered ${r.status}`);
  return r;
}

async function ok(call: Promise<{ status: number; body: any }>): Promise<any> {
  const r = await reach(call);
  if (r.status >= 300) throw new Error(`answered ${r.status}: ${JSON.stringify(r.body)}`);
  return r.body;
}

/** Runs `attempt` until it succeeds; TryAgain is retried for up to `patienceMs` in a row, other errors end it. */
async function persist<T>(patienceMs: number, attempt: () => Promise<T>): Promise<T> {
  let since: number | null = null;
  for (;;) {
    try {
      return await attempt();
    } catch (err) {
      if (!(err instanceof TryAgain)) throw err;
      since ??= performance.now();
      if (performance.now() - since > patienceMs) throw new Error(`server unreachable for ${Math.round(patienceMs / 1000)} s: ${err.message}`);
      await Bun.sleep(RETRY_MS);
    }
  }
}

/** Waits until `due` (a performance.now() time); true when stop came first. */
async function stoppedBefore(due: number, stop?: AbortSignal): Promise<boolean> {
  if (stop?.aborted) return true;
  const wait = due - performance.now();
  if (wait <= 0) return false;
  let onAbort = () => {};
  const aborted = new Promise<boolean>((resolve) => {
    onAbort = () => resolve(true);
    stop?.addEventListener("abort", onAbort, { once: true });
  });
  const result = await Promise.race([Bun.sleep(wait).then(() => false), aborted]);
  stop?.removeEventListener("abort", onAbort);
  return result;
}
