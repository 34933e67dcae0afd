import audioType from "audio-type";
import type { AudioDecoder, AudioProbe } from "./audio";
import { UndecodableAudioError } from "./audio";
import { concatSamples } from "./pcm-spans";

/** What audio-type detects -> the container and codec as the API reports them (as ffmpeg names them). */
const FORMATS: Record<string, { format: string; codec: string }> = {
  wav: { format: "wav", codec: "pcm" },
  mp3: { format: "mp3", codec: "mp3" },
  flac: { format: "flac", codec: "flac" },
  opus: { format: "ogg", codec: "opus" },
  m4a: { format: "m4a", codec: "aac" },
  webm: { format: "webm", codec: "opus" },
};
type Format = keyof typeof DECODERS;

type Decoded = { channelData: Float32Array[]; sampleRate: number };
type Codec = { decode(chunk: Uint8Array): Decoded | Promise<Decoded>; flush?(): Decoded | Promise<Decoded>; free?(): void };
type CodecModule = { decoder(): Promise<Codec> | Codec };

/**
 * One package per format, imported on first use: only the formats devices send are carried
 * (@audio/decode's umbrella would bring two dozen more decoders, and a larger attack surface).
 */
const DECODERS = {
  wav: () => import("@audio/decode-wav"),
  mp3: () => import("@audio/decode-mp3"),
  flac: () => import("@audio/decode-flac"),
  opus: () => import("@audio/decode-opus"),
  m4a: () => import("@audio/decode-mp4"),
  webm: () => import("@audio/decode-webm"),
} as const;

/** The mp3 and AAC decoders upmix mono to two equal channels: collapse them, until they ever differ. */
const UPMIXED = new Set<Format>(["mp3", "m4a"]);

async function* decodeChunked(source: ReadableStream<Uint8Array>, format: Format): AsyncGenerator<Decoded> {
  const codec = await ((await DECODERS[format]()) as unknown as CodecModule).decoder();
  let dualMono = UPMIXED.has(format);
  const norm = (d: Decoded): Decoded => {
    if (dualMono && d.channelData.length === 2) {
      const [l, r] = d.channelData as [Float32Array, Float32Array];
      if (l.every((v, i) => v === r[i])) return { channelData: [l], sampleRate: d.sampleRate };
      dualMono = false;
    }
    return d;
  };
  try {
    const reader = source.getReader();
    for (let r = await reader.read(); !r.done; r = await reader.read()) yield norm(await codec.decode(r.value));
    if (codec.flush) yield norm(await codec.flush());
  } finally {
    codec.free?.();
  }
}

const RATE = 16_000;

/**
 * Averages the channels and brings a stream to 16 kHz chunk by chunk: a box filter over
 * each output sample's span when shrinking (the mean keeps most of what lies above the new
 * Nyquist out), linear interpolation when growing. Whisper and Silero want nothing finer.
 */
class To16kMono {
  private pending = new Float32Array(0);
  private next = 0; // where the next output sample starts, in samples of `pending`
  private readonly step: number;

  constructor(rate: number) {
    this.step = rate / RATE;
  }

  push(channels: Float32Array[], final = false): Float32Array {
    const length = channels[0]?.length ?? 0;
    const src = new Float32Array(this.pending.length + length);
    src.set(this.pending);
    for (const channel of channels) for (let i = 0; i < length; i++) src[this.pending.length + i]! += channel[i]! / channels.length;
    const out = new Float32Array(Math.ceil((src.length - this.next) / this.step) + 1);
    let n = 0;
    for (;;) {
      const at = this.next;
      if (this.step >= 1) {
        const lo = Math.floor(at);
        const hi = Math.min(src.length, Math.floor(at + this.step));
        if (hi <= lo || (!final && at + this.step > src.length)) break;
        let sum = 0;
        for (let i = lo; i < hi; i++) sum += src[i]!;
        out[n++] = sum / (hi - lo);
      } else {
        const i = Math.floor(at);
        if (i >= src.length || (!final && i + 1 >= src.length)) break;
        const frac = at - i;
        out[n++] = src[i]! * (1 - frac) + (src[i + 1] ?? src[i]!) * frac;
      }
      this.next += this.step;
    }
    const keep = Math.min(src.length, Math.floor(this.next));
    this.pending = src.slice(keep);
    this.next -= keep;
    return out.subarray(0, n);
  }
}

async function detect(path: string): Promise<Format> {
  const file = Bun.file(path);
  const type = audioType(new Uint8Array(await file.slice(0, 4096).arrayBuffer()));
  if (!type || !(type in DECODERS))
    throw new UndecodableAudioError("the file is not audio in a format Parley decodes (wav, mp3, flac, ogg/opus, m4a/aac, webm/opus)");
  return type as Format;
}

/** Every decoded chunk of the file; a decoder failure is the file's fault. */
async function* chunks(path: string, format: Format, signal?: AbortSignal) {
  try {
    for await (const chunk of decodeChunked(Bun.file(path).stream(), format)) {
      if (signal?.aborted) throw signal.reason ?? new Error("decode aborted");
      if (chunk.channelData.length > 0 && chunk.channelData[0]!.length > 0) yield chunk;
    }
  } catch (err) {
    if (signal?.aborted) throw signal.reason ?? err;
    throw new UndecodableAudioError(`the audio cannot be decoded: ${(err as Error).message}`);
  }
}

/**
 * AudioDecoder inside the process, for a machine without a new enough ffmpeg (decision 091):
 * the per-format decoders of @audio/decode, WebAssembly builds of libFLAC, mpg123, libopus
 * and FAAD2, plus JavaScript for WAV and the MP4 and WebM containers. A decoder fault stays in the WebAssembly sandbox's memory.
 */
export class WasmAudioDecoder implements AudioDecoder {
  readonly binary = "built-in WebAssembly decoders (@audio/decode-*: wav, mp3, flac, opus, m4a/aac, webm)";

  /** Decodes the whole file (memory bounded by one chunk): the duration is counted, not trusted from a header. */
  async probe(path: string): Promise<AudioProbe> {
    const format = await detect(path);
    let frames = 0;
    let sampleRate = 0;
    let channels = 0;
    for await (const chunk of chunks(path, format)) {
      sampleRate ||= chunk.sampleRate;
      channels ||= chunk.channelData.length;
      frames += chunk.channelData[0]!.length;
    }
    if (!sampleRate) throw new UndecodableAudioError("the file holds no audio samples");
    return { ...FORMATS[format]!, sampleRate, channels, durationSeconds: frames / sampleRate };
  }

  async decodePcm16k(path: string, signal?: AbortSignal): Promise<Float32Array> {
    const format = await detect(path);
    const parts: Float32Array[] = [];
    let resampler: To16kMono | null = null;
    for await (const chunk of chunks(path, format, signal)) {
      resampler ??= new To16kMono(chunk.sampleRate);
      parts.push(resampler.push(chunk.channelData));
    }
    if (!resampler) throw new UndecodableAudioError("the file holds no audio samples");
    parts.push(resampler.push([], true));
    return concatSamples(parts);
  }
}
