import { createHash } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Deps } from "../../deps";
import { chunksOf } from "../../storage";

/** Containers decoded while they stream (decision 162, 174): every prefix of them decodes. */
export type LiveFormat = "wav" | "ogg" | "webm" | "mp3" | "aac";

const ascii = (b: Uint8Array, at: number, n: number) => String.fromCharCode(...b.subarray(at, at + n));

/**
 * The container of a stream, from its first bytes: one whose every prefix decodes (a WAV's
 * samples follow its header, Ogg pages, Matroska clusters, MP3 and ADTS frames stand alone),
 * `m4a` for an MP4 (its index is written last, so nothing decodes before the end), or null.
 */
export function sniffFormat(head: Uint8Array): LiveFormat | "m4a" | null {
  if (ascii(head, 0, 4) === "RIFF" && ascii(head, 8, 4) === "WAVE") return "wav";
  if (ascii(head, 0, 4) === "OggS") return "ogg";
  if (head[0] === 0x1a && head[1] === 0x45 && head[2] === 0xdf && head[3] === 0xa3) return "webm";
  if (ascii(head, 4, 4) === "ftyp") return "m4a";
  if (ascii(head, 0, 3) === "ID3") return "mp3";
  // A frame sync (11 set bits); layer bits 00 are AAC's ADTS, anything else MPEG audio.
  if (head[0] === 0xff && (head[1]! & 0xe0) === 0xe0) return (head[1]! & 0x06) === 0 ? "aac" : "mp3";
  return null;
}

/** Why a recording's format is not transcribed while it streams (kept in live_progress.waiting). */
export function notLiveReason(format: "m4a" | null): string {
  return format === "m4a"
    ? "M4A/MP4 keeps its index at the end of the file, so nothing decodes before the last chunk; the recording is transcribed at completion"
    : "this audio format is not transcribed while it streams; the recording is transcribed at completion";
}

/** The first bytes of a stored object (enough to recognise its container and read a WAV header). */
export async function headOf(deps: Deps, key: string, bytes = 16): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  for await (const chunk of chunksOf(deps.storage.read(key, { start: 0, end: bytes - 1 }))) parts.push(chunk);
  return Buffer.concat(parts);
}

/** Where a WAV's samples are: sample-independent encodings only (PCM, float, A-law, µ-law). */
export type WavLayout = { dataStart: number; sampleRate: number; blockAlign: number };

const SAMPLE_INDEPENDENT = new Set([1, 3, 6, 7, 0xfffe]);

/** The layout of a WAV from its header bytes; null when the header is not all there or the encoding has blocks. */
export function wavLayout(head: Uint8Array): WavLayout | null {
  const view = new DataView(head.buffer, head.byteOffset, head.byteLength);
  let fmt: { tag: number; sampleRate: number; blockAlign: number } | null = null;
  for (let at = 12; at + 8 <= head.length; ) {
    const id = ascii(head, at, 4);
    const size = view.getUint32(at + 4, true);
    if (id === "fmt " && at + 24 <= head.length)
      fmt = { tag: view.getUint16(at + 8, true), sampleRate: view.getUint32(at + 12, true), blockAlign: view.getUint16(at + 20, true) };
    if (id === "data") return fmt && SAMPLE_INDEPENDENT.has(fmt.tag) && fmt.blockAlign > 0 && fmt.sampleRate > 0 ? { dataStart: at + 8, ...fmt } : null;
    at += 8 + size + (size & 1);
  }
  return null;
}

type StoredChunk = { storage_key: string };

/**
 * The audio from `fromSeconds` on of the chunks received so far (in order, as one file), as
 * 16 kHz mono PCM, and the SHA-256 and size of every chunk read. A WAV is decoded from there
 * only (its header, then the samples from that point: decision 174), so each pass decodes
 * what is new plus the open speech region; other containers are decoded from the start and
 * cut (ffmpeg decodes a cut-off file up to its last whole frame). What the next chunk
 * completes is decoded on the next pass.
 */
export async function decodeAfter(
  deps: Deps,
  chunks: StoredChunk[],
  fromSeconds: number,
  wav: WavLayout | null,
  signal: AbortSignal,
): Promise<{ pcm: Float32Array; digests: string[]; sizes: number[] }> {
  const dir = await mkdtemp(join(tmpdir(), "parley-live-"));
  try {
    const path = join(dir, "window");
    const file = Bun.file(path).writer();
    // Bytes of the file before this offset are not decoded (a WAV's header excepted).
    const skipFrom = wav ? wav.dataStart : Number.POSITIVE_INFINITY;
    const resume = wav ? wav.dataStart + Math.floor(fromSeconds * wav.sampleRate) * wav.blockAlign : 0;
    const digests: string[] = [];
    const sizes: number[] = [];
    let offset = 0;
    for (const c of chunks) {
      const hash = createHash("sha256");
      let size = 0;
      for await (const bytes of chunksOf(deps.storage.read(c.storage_key))) {
        hash.update(bytes);
        // The slice of these bytes outside [skipFrom, resume): the header, and the samples from the resume point.
        const keepTo = Math.max(0, Math.min(bytes.length, skipFrom - offset));
        const keepFrom = Math.max(keepTo, Math.min(bytes.length, resume - offset));
        if (keepTo > 0) file.write(bytes.subarray(0, keepTo));
        if (keepFrom < bytes.length) file.write(bytes.subarray(keepFrom));
        offset += bytes.length;
        size += bytes.length;
      }
      digests.push(hash.digest("hex"));
      sizes.push(size);
    }
    await file.end();
    const pcm = await deps.engines.audio.decodePcm16k(path, signal);
    return { pcm: wav ? pcm : pcm.subarray(Math.round(fromSeconds * 16_000)), digests, sizes };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
