import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { FfmpegAudioDecoder, findFfmpeg } from "../../src/engines/ffmpeg-audio";
import { concatSamples } from "../../src/engines/pcm-spans";
import { decodeAfter, type LiveFormat, sniffFormat } from "../../src/modules/live/decode";
import { resumerOf } from "../../src/modules/live/resume";
import { makeTempDir, makeTenant, makeTestDeps } from "../helpers";
import { COMPRESSED_STREAMS, encoded } from "./live-support";
import { concat, silence, voiced, wav } from "./pipeline-fixtures";

/** Pearson's correlation of the two signals over their common length. */
function correlation(a: Float32Array, b: Float32Array): number {
  let [ab, aa, bb] = [0, 0, 0];
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    ab += a[i]! * b[i]!;
    aa += a[i]! * a[i]!;
    bb += b[i]! * b[i]!;
  }
  return ab / Math.sqrt(aa * bb);
}

/** An EBML variable-length integer at `at`: its value (an ID keeps its length marker) and its length. */
function vint(b: Uint8Array, at: number, isId: boolean): [number, number] {
  const length = Math.clz32(b[at]!) - 23;
  const first = isId ? b[at]! : b[at]! & (0xff >> length);
  return [b.subarray(at + 1, at + length).reduce((v, x) => v * 256 + x, first), length];
}

/**
 * The WebM with its Segment and Clusters of unknown size, as a browser's MediaRecorder writes
 * them while it records: a Cluster ends where the next one starts.
 */
function unsizedClusters(webm: Uint8Array): Uint8Array {
  const SEGMENT = 0x18538067;
  const unknown = [0x01, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff];
  const out: number[] = [];
  for (let at = 0; at < webm.length; ) {
    const [id, idLength] = vint(webm, at, true);
    const [size, sizeLength] = vint(webm, at + idLength, false);
    const dataAt = at + idLength + sizeLength;
    const unsized = id === SEGMENT || id === 0x1f43b675;
    out.push(...webm.subarray(at, at + idLength), ...(unsized ? unknown : webm.subarray(at + idLength, dataAt)));
    // The Segment's children follow its header; any other element is copied whole.
    if (id !== SEGMENT) out.push(...webm.subarray(dataAt, dataAt + size));
    at = id === SEGMENT ? dataAt : dataAt + size;
  }
  return new Uint8Array(out);
}

async function* once(bytes: Uint8Array) {
  yield bytes;
}

describe("decoding from a resume point (decision 202)", () => {
  const long = wav(concat(...Array.from({ length: 8 }, () => [voiced(2), silence(1.5)]).flat()));
  // Committed points of successive passes (whole 16 kHz samples), none on a frame or page boundary.
  const points = [0, 3.1, 7.37, 12.92, 19.5, 24.05];

  const cases = [
    ...COMPRESSED_STREAMS.map(([name, ext, args]) => [name, ext, () => encoded(long, ext, [...args])] as const),
    ["WebM/Opus with Clusters of unknown size", "webm", () => unsizedClusters(encoded(long, "webm", ["-c:a", "libopus", "-b:a", "24k"]))] as const,
    // Its frames carry 13 bytes of data each: the bit reservoir (255 bytes) reaches 20 frames back.
    ["MP3 at 8 kbit/s and 22.05 kHz", "mp3", () => encoded(long, "mp3", ["-ar", "22050", "-c:a", "libmp3lame", "-b:a", "8k"])] as const,
  ];
  for (const [name, ext, bytes] of cases) {
    test(`${name}: the audio each pass decodes from its committed point joins into the whole file's decode, and later passes are handed its tail only`, async () => {
      const decoder = new FfmpegAudioDecoder(findFfmpeg());
      const handed: number[] = [];
      const audio = {
        binary: decoder.binary,
        probe: (path: string) => decoder.probe(path),
        decodePcm16k: (path: string, signal?: AbortSignal) => {
          handed.push(Bun.file(path).size);
          return decoder.decodePcm16k(path, signal);
        },
      };
      const deps = await makeTestDeps({ engines: { audio } });
      const { project } = makeTenant(deps);
      const file = bytes();
      const size = Math.ceil(file.length / 7);
      const chunks: { storage_key: string }[] = [];
      for (let at = 0; at < file.length; at += size) {
        const key = `${project.id}/test/rec_decode/chunk-${chunks.length}`;
        await deps.storage.write(key, once(file.slice(at, at + size)));
        chunks.push({ storage_key: key });
      }
      const format = { wav: null, resume: resumerOf(sniffFormat(file) as LiveFormat, file) };
      const pieces: Float32Array[] = [];
      for (const [i, from] of points.entries()) {
        const { pcm } = await decodeAfter(deps, chunks, { keys: [], digests: [], sizes: [] }, from, format, new AbortController().signal);
        const until = points[i + 1];
        pieces.push(until === undefined ? pcm : pcm.subarray(0, Math.round((until - from) * 16_000)));
      }
      const joined = concatSamples(pieces);
      const path = join(makeTempDir(), `whole.${ext}`);
      writeFileSync(path, file);
      const whole = await decoder.decodePcm16k(path);
      // No gap and no repeated audio at the joins: the same length (to one frame: an MP3's
      // whole decode drops the encoder's padding its Xing frame counts) and the same samples
      // (to a hundredth of a 16 kHz sample's offset, where a 44.1 kHz frame starts off the grid).
      expect(Math.abs(joined.length - whole.length)).toBeLessThanOrEqual(418);
      expect(correlation(joined, whole)).toBeGreaterThan(0.999);
      let worst = 0;
      for (let i = 0; i < Math.min(joined.length, whole.length); i++) worst = Math.max(worst, Math.abs(joined[i]! - whole[i]!));
      expect(worst).toBeLessThan(0.05);
      // The last pass (from 24.05 of 28 s) is handed the header and a little more than the last 4 s.
      expect(handed).toHaveLength(points.length);
      expect(handed.at(-1)!).toBeLessThan(file.length * 0.25);
    });
  }
});
