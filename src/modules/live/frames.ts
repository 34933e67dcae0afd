import { ascii } from "./decode";
import type { Resumed } from "./resume";

/**
 * MPEG audio (MP3) and AAC in ADTS are self-framing: every frame starts with a header that
 * gives its length and the samples it holds, so a stream can be decoded from any frame.
 */
type Frame = { at: number; samples: number; sampleRate: number; data: number; reservoir: number };

// Kilobits a second by bitrate index: MPEG-1 Layer III, then MPEG-2 and 2.5 Layer III.
const MPEG1_KBPS = [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320];
const MPEG2_KBPS = [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160];
const MPEG_RATES = [44_100, 48_000, 32_000];
const ADTS_RATES = [96_000, 88_200, 64_000, 48_000, 44_100, 32_000, 24_000, 22_050, 16_000, 12_000, 11_025, 8_000, 7_350];

/** The MP3 (Layer III) or ADTS frame whose header is at `at`, with its length; null when none starts there. */
function frameAt(b: Uint8Array, at: number): (Frame & { length: number }) | null {
  if (at + 7 > b.length || b[at] !== 0xff || (b[at + 1]! & 0xe0) !== 0xe0) return null;
  const layer = (b[at + 1]! >> 1) & 3;
  if (layer === 0) {
    // ADTS: MPEG-2/4 AAC, 1024 samples per raw data block.
    const rate = ADTS_RATES[(b[at + 2]! >> 2) & 0xf];
    const length = ((b[at + 3]! & 3) << 11) | (b[at + 4]! << 3) | (b[at + 5]! >> 5);
    if (!rate || length < 7) return null;
    return { at, length, samples: 1024 * ((b[at + 6]! & 3) + 1), sampleRate: rate, data: 0, reservoir: 0 };
  }
  const version = (b[at + 1]! >> 3) & 3; // 3: MPEG-1, 2: MPEG-2, 0: MPEG-2.5
  const rateIndex = (b[at + 2]! >> 2) & 3;
  const kbps = (version === 3 ? MPEG1_KBPS : MPEG2_KBPS)[b[at + 2]! >> 4];
  // Layer III only (what "MP3" is); free-format bitrates (index 0) give no length.
  if (layer !== 1 || version === 1 || rateIndex === 3 || !kbps) return null;
  const sampleRate = MPEG_RATES[rateIndex]! / (version === 3 ? 1 : version === 2 ? 2 : 4);
  const samples = version === 3 ? 1152 : 576;
  const length = Math.floor(((samples / 8) * kbps * 1000) / sampleRate) + ((b[at + 2]! >> 1) & 1);
  // The bytes of main data a frame carries (after its header, CRC and side information) and
  // how far back its own may begin (main_data_begin's range): the bit reservoir.
  const data = length - 4 - (b[at + 1]! & 1 ? 0 : 2) - sideInfoBytes(b, at);
  return { at, length, samples, sampleRate, data, reservoir: version === 3 ? 511 : 255 };
}

/** Where an ID3v2 tag at the start of the stream ends (0 when there is none). */
function id3End(b: Uint8Array): number {
  if (b.length < 10 || ascii(b, 0, 3) !== "ID3") return 0;
  const size = ((b[6]! & 0x7f) << 21) | ((b[7]! & 0x7f) << 14) | ((b[8]! & 0x7f) << 7) | (b[9]! & 0x7f);
  return 10 + size + (b[5]! & 0x10 ? 10 : 0);
}

/** The side information's length in the MP3 frame at `at`: by MPEG version and mono or not. */
function sideInfoBytes(b: Uint8Array, at: number): number {
  const mono = b[at + 3]! >> 6 === 3;
  return ((b[at + 1]! >> 3) & 3) === 3 ? (mono ? 17 : 32) : mono ? 9 : 17;
}

/** An MP3's first frame may hold no audio but a Xing/Info or VBRI tag (frame count, encoder delay). */
function isTagFrame(b: Uint8Array, f: Frame & { length: number }): boolean {
  if ((b[f.at + 1]! & 0x06) === 0) return false; // ADTS
  const text = (at: number) => ascii(b, f.at + at, 4);
  return ["Xing", "Info"].includes(text(4 + sideInfoBytes(b, f.at))) || text(36) === "VBRI";
}

/**
 * The frames before the one holding the committed point that must decode as in the whole
 * stream: MP3 and AAC overlap each frame's transform with the previous one's (and MP3's
 * synthesis filter keeps some of it). Before them, an MP3 needs the frames its bit reservoir
 * reaches into: a frame's data may begin up to 511 bytes (255 at MPEG-2 rates) of main data
 * back, which at 8 kbit/s is 20 frames. Their samples are decoded and cut.
 */
const OVERLAP_FRAMES = 2;

/**
 * A frame's start seldom falls on a sample of the 16 kHz audio (1152 samples at 44.1 kHz are
 * 417.96 of them): audio resampled from there is off the whole decode's by a fraction of a
 * sample. Decoding starts up to this many frames earlier, at the frame whose start falls
 * nearest to one: at 44.1 kHz each frame back moves it by 0.04 (MP3) or 0.52 (AAC) of a
 * sample, so 24 frames (0.6 s) find one within 0.02 of a sample; at 48 kHz one is exact within 3 frames.
 */
const ALIGN_FRAMES = 24;

/**
 * An MP3 or ADTS stream from far enough before the frame holding `fromSeconds` for that frame
 * to decode as in the whole stream (OVERLAP_FRAMES, ALIGN_FRAMES): the bytes before its first audio frame (an ID3 tag, an MP3's Xing/LAME frame) and then the
 * frames from there. A decoder applies what that header says (the encoder delay it skips)
 * to the resumed stream as to the whole one, so the resumed audio starts at the frame's time
 * in the whole decode (measured sample-exact with ffmpeg). Null when the frames do not parse
 * (free format, another layer, a sample rate that changes): the stream is decoded from the start.
 */
export function framedResume(bytes: Uint8Array, fromSeconds: number): Resumed | null {
  const frames: Frame[] = [];
  let at = id3End(bytes);
  let headerEnd = at;
  for (;;) {
    const f = frameAt(bytes, at);
    if (!f) break;
    if (at + f.length > bytes.length) break; // the last frame is not all there yet
    if (frames.length === 0 && headerEnd === at && isTagFrame(bytes, f)) headerEnd = at + f.length;
    else frames.push(f);
    at += f.length;
  }
  // A stream that stops parsing before its end (free format, junk) is decoded whole; one cut mid-frame is not.
  if (at < bytes.length && frameAt(bytes, at) === null && bytes.length - at >= 7) return null;
  if (frames.some((f) => f.sampleRate !== frames[0]!.sampleRate)) return null;
  const rate = frames[0]?.sampleRate ?? 1;
  // Samples before each frame, and the frame holding the committed point.
  const before = [0];
  for (const f of frames) before.push(before.at(-1)! + f.samples);
  let holding = 0;
  while (holding < frames.length && before[holding + 1]! / rate <= fromSeconds) holding++;
  // How far a frame's start is from a 16 kHz sample, in samples of the stream's rate.
  const offGrid = (i: number) => {
    const phase = (before[i]! * 16_000) % rate;
    return Math.min(phase, rate - phase);
  };
  // The overlapping frames, then those whose main data the first of them may begin in.
  let latest = Math.max(0, holding - OVERLAP_FRAMES);
  for (let reached = 0; latest > 0 && reached < frames[latest]!.reservoir; ) reached += frames[--latest]!.data;
  // Then, of up to ALIGN_FRAMES before that, the latest that starts nearest a 16 kHz sample.
  let start = latest;
  for (let i = latest - 1; i >= Math.max(0, latest - ALIGN_FRAMES) && offGrid(start) > 0; i--) if (offGrid(i) < offGrid(start)) start = i;
  if (start === 0) return { pieces: [bytes], startSeconds: 0 };
  return { pieces: [bytes.subarray(0, headerEnd), bytes.subarray(frames[start]!.at)], startSeconds: before[start]! / rate };
}
