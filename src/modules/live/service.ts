import { createHash } from "node:crypto";
import type { Deps } from "../../deps";
import type { Principal } from "../../http/auth";
import { ApiError } from "../../http/errors";
import { eventData, TRANSCRIPTION_EVENT_FIELDS } from "../transcriptions/schema";
import { findTranscription, getTranscription } from "../transcriptions/service";
import { onLiveSegments } from "./notify";
import { chunksOf } from "../../storage";
import type { Tenant } from "../../tenancy";
import type { EarlierWork } from "../transcriptions/pipeline";
import { stopLivePasses } from "./job";
import { progressOf, segmentsAfter } from "./store";

/** Open live streams per credential (decision 163): each holds a connection and wakes on every commit. */
export const LIVE_STREAMS_PER_KEY = 4;
/** A comment line this often keeps proxies from closing a quiet stream. */
const KEEPALIVE_MS = 15_000;

const open = new Map<string, number>();

/** The Last-Event-ID a reconnecting client sends: the seq of the last segment it has (0 when none or unreadable). */
export function lastSeq(header: string | null | undefined): number {
  return header && /^\d{1,15}$/.test(header) ? Number(header) : 0;
}

const frame = (event: string, data: unknown, id?: number) => `${id === undefined ? "" : `id: ${id}\n`}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;

/**
 * GET /transcriptions/{id}/live: the provisional segments after `after`, then each one as it
 * is committed, and `completed` or `failed` to end. Reading it is reading the transcription
 * (same access rule, audited as transcription.read). The database is the source: a wake only
 * says "look again", so nothing is lost between a wake and a reconnect.
 */
export async function openLiveStream(deps: Deps, principal: Principal, id: string, after: number, abort: AbortSignal): Promise<ReadableStream<Uint8Array>> {
  await getTranscription(deps, principal, id);
  const streams = open.get(principal.credentialId) ?? 0;
  if (streams >= LIVE_STREAMS_PER_KEY) {
    throw new ApiError("rate_limited", `This key already has ${LIVE_STREAMS_PER_KEY} live streams open; close one first.`, { headers: { "retry-after": "5" } });
  }
  open.set(principal.credentialId, streams + 1);
  const encoder = new TextEncoder();
  let wake = () => {};
  let cleanup = () => {};
  return new ReadableStream<Uint8Array>({
    async start(controller) {
      let seq = after;
      let pending = true;
      const nudge = () => {
        pending = true;
        wake();
      };
      const stops = [onLiveSegments(id, nudge), deps.events.onRecorded(nudge)];
      const keepalive = setInterval(() => controller.enqueue(encoder.encode(": keepalive\n\n")), KEEPALIVE_MS);
      let closed = false;
      cleanup = () => {
        if (closed) return;
        closed = true;
        for (const stop of stops) stop();
        clearInterval(keepalive);
        const left = (open.get(principal.credentialId) ?? 1) - 1;
        if (left > 0) open.set(principal.credentialId, left);
        else open.delete(principal.credentialId);
        wake();
      };
      abort.addEventListener("abort", cleanup, { once: true });
      try {
        while (!closed) {
          if (!pending) await new Promise<void>((resolve) => (wake = resolve));
          pending = false;
          if (closed) break;
          for (const s of segmentsAfter(deps.db, id, seq)) {
            controller.enqueue(encoder.encode(frame("segment", s, s.seq)));
            seq = s.seq;
          }
          const record = findTranscription(deps.db, principal, id);
          // Deleted while watched (its recording erased): the stream just ends.
          if (!record) break;
          if (record.status === "failed") {
            controller.enqueue(encoder.encode(frame("failed", eventData(record, TRANSCRIPTION_EVENT_FIELDS["transcription.failed"]))));
            break;
          }
          if (record.status === "completed") {
            controller.enqueue(encoder.encode(frame("completed", eventData(record, TRANSCRIPTION_EVENT_FIELDS["transcription.completed"]))));
            break;
          }
        }
      } finally {
        const wasOpen = !closed;
        cleanup();
        if (wasOpen) controller.close();
      }
    },
    cancel() {
      cleanup();
    },
  });
}

/**
 * What a live transcription committed, for its whole-file run to reuse (decision 173): only
 * when the verified file `key` begins with exactly the bytes of the chunks it was transcribed
 * from (the same sizes and SHA-256s; a chunk replaced after use makes them differ). Null
 * when there is nothing to reuse: the whole file is transcribed, as without live work.
 */
export async function reusableLiveWork(deps: Deps, tenant: Tenant, transcriptionId: string, key: string): Promise<EarlierWork | null> {
  // Asked once the recording is verified, when the live passes are over.
  stopLivePasses(transcriptionId);
  const progress = progressOf(deps.db, tenant, transcriptionId);
  if (!progress || progress.committed_seconds <= 0 || progress.used_sizes.length !== progress.used_digests.length) return null;
  const sizes = progress.used_sizes;
  const total = sizes.reduce((a, b) => a + b, 0);
  if (total === 0 || ((await deps.storage.size(key)) ?? 0) < total) return null;
  const digests: string[] = [];
  let hash = createHash("sha256");
  let left = sizes[0]!;
  for await (let bytes of chunksOf(deps.storage.read(key, { start: 0, end: total - 1 }))) {
    while (bytes.length > 0) {
      const take = Math.min(left, bytes.length);
      hash.update(bytes.subarray(0, take));
      bytes = bytes.subarray(take);
      left -= take;
      if (left === 0) {
        digests.push(hash.digest("hex"));
        hash = createHash("sha256");
        left = sizes[digests.length] ?? Number.POSITIVE_INFINITY;
      }
    }
  }
  if (digests.length !== sizes.length || digests.some((d, i) => d !== progress.used_digests[i])) return null;
  // The live job always scores a segment (the engine's confidence, else the VAD's): the column is only nullable.
  const segments = segmentsAfter(deps.db, transcriptionId, 0).map(({ start, end, text, confidence }) => ({ start, end, text, confidence: confidence ?? 0 }));
  return { segments, until: progress.committed_seconds, language: progress.language };
}
