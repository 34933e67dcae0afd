import { createHash } from "node:crypto";
import { join } from "node:path";
import type { Deps } from "../../deps";
import { chunksOf } from "../../storage";
import type { Resumed } from "./resume";

/** Where a compressed stream is decoded from for a pass starting at `fromSeconds` (src/modules/live/resume.ts). */
export type Resumer = (bytes: Uint8Array, fromSeconds: number) => Resumed | null;

/** Containers decoded while they stream (decision 162, 174): every prefix of them decodes. */
export type LiveFormat = "wav" | "ogg" | "webm" | "mp3" | "aac";

/** `n` bytes at `at` as text: a container's magic and tags. */
export const ascii = (b: Uint8Array, at: number, n: number) => String.fromCharCode(...b.subarray(at, at + n));

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
 * What a pass decodes of a WAV: the file's bytes before `headerEnd` (its header), then those
 * from `resume` on, whose audio starts at `startSeconds` of the recording.
 */
type Resume = { headerEnd: number; resume: number; startSeconds: number };

const FROM_THE_START: Resume = { headerEnd: Number.POSITIVE_INFINITY, resume: Number.POSITIVE_INFINITY, startSeconds: 0 };

/** A WAV from the sample frame at `fromSeconds` (or just before it). */
function wavResume(wav: WavLayout, fromSeconds: number): Resume {
  const frame = Math.floor(fromSeconds * wav.sampleRate);
  return { headerEnd: wav.dataStart, resume: wav.dataStart + frame * wav.blockAlign, startSeconds: frame / wav.sampleRate };
}

/** What a pass knows of the chunks an earlier one used (live_progress): by index, the key read and its bytes' digest and size. */
export type UsedChunks = { keys: string[]; digests: string[]; sizes: number[] };

/**
 * The audio from `fromSeconds` on of the chunks received so far (in order, as one file), as
 * 16 kHz mono PCM, and the SHA-256 and size of every chunk read. A WAV is decoded from
 * that sample on (its header, then the samples; decision 174), a compressed stream from a
 * point its decoder can start at just before it (`format.resume`: an Ogg page, a WebM block,
 * an MP3 or ADTS frame; decision 202), so each pass decodes what is new plus the open speech
 * region; others are decoded from the start and cut (ffmpeg decodes a cut-off file up to
 * its last whole frame). What the next chunk completes is decoded on the next pass.
 * A chunk still under the key `used` recorded is not hashed again (decision 194): a chunk
 * sent again is stored under a new key, so its bytes are those hashed. Of such a chunk a WAV
 * pass reads only the header and the samples from the resume point.
 */
export async function decodeAfter(
  deps: Deps,
  chunks: StoredChunk[],
  used: UsedChunks,
  fromSeconds: number,
  format: { wav: WavLayout | null; resume: Resumer | null },
  signal: AbortSignal,
): Promise<{ pcm: Float32Array; digests: string[]; sizes: number[] }> {
  return deps.scratch.withDir(async (dir) => {
    const path = join(dir, "window");
    const file = Bun.file(path).writer();
    // A WAV's plan is known from its header; a compressed stream's from its frames, so its
    // bytes are kept (3 to 16 KB a second of audio) and written after reading.
    const plan = format.wav ? wavResume(format.wav, fromSeconds) : FROM_THE_START;
    let startSeconds = plan.startSeconds;
    const kept: Uint8Array[] = [];
    const digests: string[] = [];
    const sizes: number[] = [];
    let offset = 0;
    const write = (bytes: Uint8Array, at: number) => {
      // The slice of these bytes outside [headerEnd, resume): the header, and the audio from the resume point.
      const keepTo = Math.max(0, Math.min(bytes.length, plan.headerEnd - at));
      const keepFrom = Math.max(keepTo, Math.min(bytes.length, plan.resume - at));
      if (keepTo > 0) file.write(bytes.subarray(0, keepTo));
      if (keepFrom < bytes.length) file.write(bytes.subarray(keepFrom));
    };
    /** Reads `key` (its bytes `start`..`end`, end exclusive, when given), passing each piece to `take` with its offset in the object. */
    const read = async (key: string, take: (bytes: Uint8Array, at: number) => void, start?: number, end?: number) => {
      let at = start ?? 0;
      const range = start === undefined || end === undefined ? undefined : { start, end: end - 1 };
      for await (const bytes of chunksOf(deps.storage.read(key, range))) {
        take(bytes, at);
        at += bytes.length;
      }
      return at;
    };
    const use = (bytes: Uint8Array, at: number) => (format.resume ? kept.push(bytes) : write(bytes, at));
    for (const [i, c] of chunks.entries()) {
      const from = offset;
      if (used.keys[i] === c.storage_key && used.digests[i] !== undefined && used.sizes[i] !== undefined) {
        const size = used.sizes[i]!;
        digests.push(used.digests[i]!);
        sizes.push(size);
        offset += size;
        if (!format.wav) await read(c.storage_key, (bytes, at) => use(bytes, from + at));
        else {
          // Only what write keeps: the header's bytes in this chunk, and those from the resume point.
          const headerTo = Math.max(0, Math.min(size, plan.headerEnd - from));
          const resumeFrom = Math.max(headerTo, Math.min(size, plan.resume - from));
          if (headerTo > 0) await read(c.storage_key, (bytes, at) => write(bytes, from + at), 0, headerTo);
          if (resumeFrom < size) await read(c.storage_key, (bytes, at) => write(bytes, from + at), resumeFrom, size);
        }
        continue;
      }
      const hash = createHash("sha256");
      const end = await read(c.storage_key, (bytes, at) => {
        hash.update(bytes);
        use(bytes, from + at);
      });
      digests.push(hash.digest("hex"));
      sizes.push(end);
      offset += end;
    }
    if (format.resume) {
      const all = Buffer.concat(kept);
      const resumed = format.resume(all, fromSeconds) ?? { pieces: [all], startSeconds: 0 };
      for (const piece of resumed.pieces) file.write(piece);
      startSeconds = resumed.startSeconds;
    }
    await file.end();
    const pcm = await deps.engines.audio.decodePcm16k(path, signal);
    return { pcm: pcm.subarray(Math.max(0, Math.round((fromSeconds - startSeconds) * 16_000))), digests, sizes };
  });
}
