import { ascii, type LiveFormat, type Resumer } from "./decode";
import { framedResume } from "./frames";
import { webmResume } from "./matroska";

/**
 * Where a compressed stream is decoded from (decision 202): the bytes to hand the decoder (the
 * stream's header, then its audio from a point it can start at) and the recording time the
 * decoded audio starts at. What lies before the committed point is decoded (its pre-roll) and cut.
 */
export type Resumed = { pieces: Uint8Array[]; startSeconds: number };

/** An Ogg stream whose first page holds Opus's identification header. */
export const isOggOpus = (head: Uint8Array) => head.length > 27 && ascii(head, 27 + head[26]!, 8) === "OpusHead";

/** An Opus decoder settles within 80 ms of a page it starts on (RFC 7845 pre-roll): decoding starts this much earlier. */
const OPUS_PREROLL_SECONDS = 0.1;

/**
 * An Ogg/Opus stream from the last page that starts a packet at least the pre-roll before
 * `fromSeconds`: its header pages, then the pages from there. A page's audio starts at the
 * previous page's granule position (48 kHz samples; ffmpeg places it so, measured). Null
 * when the stream is not Opus or its pages do not parse: it is then decoded from the start.
 */
export function oggOpusResume(bytes: Uint8Array, fromSeconds: number): Resumed | null {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const pages: { at: number; granule: number; continued: boolean }[] = [];
  for (let at = 0; at + 27 <= bytes.length && ascii(bytes, at, 4) === "OggS"; ) {
    const segments = bytes[at + 26]!;
    if (at + 27 + segments > bytes.length) break;
    let size = 27 + segments;
    for (let i = 0; i < segments; i++) size += bytes[at + 27 + i]!;
    if (at + size > bytes.length) break;
    pages.push({ at, granule: Number(view.getBigInt64(at + 6, true)), continued: (bytes[at + 5]! & 1) === 1 });
    at += size;
  }
  if (pages.length === 0 || !isOggOpus(bytes)) return null;
  // The header pages (OpusHead, OpusTags) have granule 0; the first audio page does not.
  const firstAudio = pages.findIndex((p) => p.granule !== 0);
  const whole = { pieces: [bytes], startSeconds: 0 };
  if (firstAudio < 1) return whole;
  let start = firstAudio;
  for (let i = firstAudio + 1; i < pages.length; i++) {
    const before = pages[i - 1]!.granule / 48_000;
    if (before > fromSeconds - OPUS_PREROLL_SECONDS) break;
    if (!pages[i]!.continued && pages[i - 1]!.granule > 0) start = i;
  }
  if (start === firstAudio) return whole;
  return { pieces: [bytes.subarray(0, pages[firstAudio]!.at), bytes.subarray(pages[start]!.at)], startSeconds: pages[start - 1]!.granule / 48_000 };
}

/**
 * How a pass finds where to decode a compressed stream from, by its container (`head`: its
 * first bytes); null for those decoded from the start of the file (a WAV has its own plan).
 */
export function resumerOf(format: LiveFormat, head: Uint8Array): Resumer | null {
  if (format === "ogg") return isOggOpus(head) ? oggOpusResume : null;
  if (format === "webm") return webmResume;
  if (format === "mp3" || format === "aac") return framedResume;
  return null;
}
