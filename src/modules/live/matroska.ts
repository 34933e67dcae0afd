import type { Resumed } from "./resume";

/**
 * WebM (Matroska) holding Opus: the file's header (EBML header, Segment, Info, Tracks with
 * Opus's identification header) then Clusters of blocks, each block stamped with its time.
 */
const EBML = 0x1a45dfa3;
const SEGMENT = 0x18538067;
const INFO = 0x1549a966;
const TRACKS = 0x1654ae6b;
const TRACK_ENTRY = 0xae;
const CODEC_ID = 0x86;
const CLUSTER = 0x1f43b675;
const CLUSTER_TIMECODE = 0xe7;
const SIMPLE_BLOCK = 0xa3;
const BLOCK_GROUP = 0xa0;
const BLOCK = 0xa1;
/** What a Cluster of unknown size (a live writer's) may hold: any other element ends it. */
const CLUSTER_CHILDREN = new Set([CLUSTER_TIMECODE, SIMPLE_BLOCK, BLOCK_GROUP, 0xa7, 0xab, 0xec, 0xbf, 0x5854]);
/** An element size of all ones: "unknown", as a live writer gives its Segment and Clusters. */
const UNKNOWN_SIZE = new Uint8Array([0x01, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]);

type Element = { id: number; at: number; dataAt: number; end: number | null };

/** An EBML variable-length integer at `at`: an element ID keeps its length marker, a size does not. */
function vint(b: Uint8Array, at: number, isId: boolean): { value: number; length: number; unknown: boolean } | null {
  const first = b[at];
  if (first === undefined || first === 0) return null;
  const length = Math.clz32(first) - 23;
  if (at + length > b.length || (isId && length > 4)) return null;
  let value = isId ? first : first & (0xff >> length);
  let unknown = !isId && value === 0xff >> length;
  for (let i = 1; i < length; i++) {
    value = value * 256 + b[at + i]!;
    unknown &&= b[at + i] === 0xff;
  }
  return { value, length, unknown };
}

function element(b: Uint8Array, at: number): Element | null {
  const id = vint(b, at, true);
  const size = id && vint(b, at + id.length, false);
  if (!id || !size) return null;
  const dataAt = at + id.length + size.length;
  return { id: id.value, at, dataAt, end: size.unknown ? null : dataAt + size.value };
}

/** The children of a sized element whose bytes are all there. */
function childrenOf(b: Uint8Array, parent: Element): Element[] {
  const out: Element[] = [];
  for (let at = parent.dataAt; parent.end !== null && at < parent.end; ) {
    const e = element(b, at);
    if (!e || e.end === null || e.end > parent.end) break;
    out.push(e);
    at = e.end;
  }
  return out;
}

const uint = (b: Uint8Array, e: Element) => b.subarray(e.dataAt, e.end!).reduce((v, x) => v * 256 + x, 0);

/**
 * A block's element offset, its Cluster's time, and the Opus samples (48 kHz) it holds, read
 * from its packet's TOC byte (RFC 6716 3.1): counting them gives a block's exact place in the
 * audio, where its timestamp is rounded to the Cluster's unit (a millisecond) after the
 * writer shifted it by the pre-skip.
 */
type Block = { at: number; clusterTimecode: number; samples: number };

/** Opus frame lengths (48 kHz samples) by the TOC's configuration number (RFC 6716 table 2). */
const OPUS_FRAME = [
  480, 960, 1920, 2880, 480, 960, 1920, 2880, 480, 960, 1920, 2880, 480, 960, 480, 960, 120, 240, 480, 960, 120, 240, 480, 960, 120, 240, 480, 960, 120, 240,
  480, 960,
];

/** The samples of the one Opus packet in a block's payload (`at`..`end`); null for a laced block (several packets). */
function opusSamples(b: Uint8Array, at: number, end: number): number | null {
  if (b[at + 2]! & 0x06 || at + 4 > end) return null;
  const toc = b[at + 3]!;
  const frames = (toc & 3) === 0 ? 1 : (toc & 3) < 3 ? 2 : (b[at + 4] ?? 0) & 0x3f;
  return OPUS_FRAME[toc >> 3]! * frames;
}

/** The whole blocks of the Cluster at `cluster`, and where the Cluster ends (null: not all there). */
function clusterBlocks(b: Uint8Array, cluster: Element, blocks: Block[]): number | null {
  let timecode: number | null = null;
  const limit = cluster.end ?? b.length;
  let at = cluster.dataAt;
  while (at < limit) {
    const e = element(b, at);
    if (!e) return null;
    if (cluster.end === null && !CLUSTER_CHILDREN.has(e.id)) return at;
    if (e.end === null || e.end > b.length) return null;
    if (e.id === CLUSTER_TIMECODE) timecode = uint(b, e);
    const block = e.id === SIMPLE_BLOCK ? e : e.id === BLOCK_GROUP ? childrenOf(b, e).find((c) => c.id === BLOCK) : undefined;
    if (block && timecode !== null) {
      const track = vint(b, block.dataAt, false);
      const samples = track && opusSamples(b, block.dataAt + track.length, block.end!);
      if (!samples) return null;
      blocks.push({ at: e.at, clusterTimecode: timecode, samples });
    }
    at = e.end;
  }
  return cluster.end !== null && cluster.end <= b.length ? cluster.end : null;
}

/** An Opus decoder settles within 80 ms of where it starts (RFC 7845 pre-roll): decoding starts this much earlier. */
const OPUS_PREROLL_SECONDS = 0.1;

/**
 * A WebM/Opus stream from the last block at least the pre-roll before `fromSeconds`: its
 * header (the EBML header, a Segment of unknown size, its Info and Tracks; the SeekHead and
 * Cues are left out, their offsets would point elsewhere), a Cluster of unknown size with
 * that block's Cluster time, then the bytes from the block on (the rest of its Cluster, then
 * the next Clusters, which end the one written). A block's audio starts where the samples
 * of the blocks before it end (measured sample-exact with ffmpeg: the decoder skips the Opus
 * pre-skip of the resumed stream as of the whole one). Null when the stream is not one Opus
 * track or does not parse: it is then decoded from the start.
 */
export function webmResume(bytes: Uint8Array, fromSeconds: number): Resumed | null {
  const ebml = element(bytes, 0);
  const segment = ebml?.id === EBML && ebml.end !== null ? element(bytes, ebml.end) : null;
  if (!ebml?.end || segment?.id !== SEGMENT) return null;
  const head: Uint8Array[] = [bytes.subarray(0, ebml.end), new Uint8Array([0x18, 0x53, 0x80, 0x67]), UNKNOWN_SIZE];
  let opus = false;
  const blocks: Block[] = [];
  for (let at: number | null = segment.dataAt; at !== null && at < (segment.end ?? bytes.length); ) {
    const e = element(bytes, at);
    if (!e) break;
    if (e.id === CLUSTER) {
      at = clusterBlocks(bytes, e, blocks);
      continue;
    }
    if (e.end === null || e.end > bytes.length) break;
    if (e.id === INFO) head.push(bytes.subarray(e.at, e.end));
    if (e.id === TRACKS) {
      head.push(bytes.subarray(e.at, e.end));
      const entries = childrenOf(bytes, e).filter((c) => c.id === TRACK_ENTRY);
      const codec = entries.length === 1 ? childrenOf(bytes, entries[0]!).find((c) => c.id === CODEC_ID) : undefined;
      opus = codec !== undefined && new TextDecoder().decode(bytes.subarray(codec.dataAt, codec.end!)) === "A_OPUS";
    }
    at = e.end;
  }
  if (!opus || blocks.length === 0) return null;
  let start = 0;
  let samples = 0;
  while (start + 1 < blocks.length && (samples + blocks[start]!.samples) / 48_000 <= fromSeconds - OPUS_PREROLL_SECONDS) samples += blocks[start++]!.samples;
  if (start === 0) return { pieces: [bytes], startSeconds: 0 };
  const block = blocks[start]!;
  const timecode = new Uint8Array(10);
  timecode.set([CLUSTER_TIMECODE, 0x88]);
  new DataView(timecode.buffer).setBigUint64(2, BigInt(block.clusterTimecode));
  const cluster = [new Uint8Array([0x1f, 0x43, 0xb6, 0x75]), UNKNOWN_SIZE, timecode];
  return { pieces: [...head, ...cluster, bytes.subarray(block.at)], startSeconds: samples / 48_000 };
}
