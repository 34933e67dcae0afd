/** A transcript segment as the pipeline stores it (spec 2.8, with its timed words where the engine gave them); times in seconds. */
export type TranscriptSegment = {
  start: number;
  end: number;
  text: string;
  speaker?: string | null;
  confidence?: number;
  words?: readonly { start: number; end: number; text: string }[];
};

/** A stretch of transcript indexed as one retrieval unit. */
export type Chunk = { seq: number; startMs: number; endMs: number; speaker: string | null; text: string };

export type ChunkingOptions = {
  minSeconds: number;
  maxSeconds: number;
  dominantShare: number;
  /** Repeat a chunk's last (short) segment at the start of the next; off when the chunks are read as one whole transcript. */
  overlap: boolean;
};

/**
 * About 30-60 s per chunk: long enough to carry an answer's context, short enough that a
 * citation's start_ms lands near the words. A speaker counts as dominant with two thirds
 * of the chunk's speech time; below that the chunk is mixed (null).
 */
export const DEFAULT_CHUNKING: ChunkingOptions = { minSeconds: 30, maxSeconds: 60, dominantShare: 2 / 3, overlap: true };

function dominantSpeaker(segments: TranscriptSegment[], share: number): string | null {
  const bySpeaker = new Map<string, number>();
  let total = 0;
  for (const s of segments) {
    const length = Math.max(0, s.end - s.start);
    total += length;
    if (s.speaker) bySpeaker.set(s.speaker, (bySpeaker.get(s.speaker) ?? 0) + length);
  }
  for (const [speaker, length] of bySpeaker) if (total > 0 && length / total >= share) return speaker;
  return null;
}

function toChunk(seq: number, segments: TranscriptSegment[], share: number): Chunk {
  return {
    seq,
    startMs: Math.round(segments[0]!.start * 1000),
    endMs: Math.round(segments[segments.length - 1]!.end * 1000),
    speaker: dominantSpeaker(segments, share),
    text: segments.map((s) => s.text.trim()).join(" "),
  };
}

/**
 * A segment with timed words cut between words into pieces shorter than `limit` seconds; one
 * without words, or short enough, whole. An engine that hears minutes as one segment
 * (Parakeet) would otherwise make one chunk of them, and a citation's start_ms minutes early.
 */
function pieces(segment: TranscriptSegment, limit: number): TranscriptSegment[] {
  const words = segment.words;
  if (!words?.length || segment.end - segment.start < limit) return [segment];
  const out: TranscriptSegment[] = [];
  let from = 0;
  for (let i = 1; i <= words.length; i++) {
    if (i < words.length && words[i]!.end - words[from]!.start < limit) continue;
    const start = from === 0 ? segment.start : words[from]!.start;
    const end = i === words.length ? segment.end : words[i - 1]!.end;
    out.push({
      ...segment,
      start,
      end,
      text: words
        .slice(from, i)
        .map((w) => w.text)
        .join(" "),
      words: words.slice(from, i),
    });
    from = i;
  }
  return out;
}

/**
 * Cuts segments into chunks on segment boundaries, and inside a long segment between its
 * words where it has them (decision 186). Each chunk after the first starts
 * with the previous chunk's last segment, so a sentence that straddles a cut can be
 * found from either side (the "little overlap").
 */
export function chunkSegments(input: readonly TranscriptSegment[], options: ChunkingOptions = DEFAULT_CHUNKING): Chunk[] {
  // Pieces short enough to be carried over as the next chunk's overlap.
  const segments = input.filter((s) => s.text.trim().length > 0).flatMap((s) => pieces(s, options.minSeconds / 2));
  const chunks: Chunk[] = [];
  let current: TranscriptSegment[] = [];
  let fresh = 0; // segments in `current` that no earlier chunk holds
  const close = () => {
    if (fresh > 0) chunks.push(toChunk(chunks.length, current, options.dominantShare));
    const carried = current[current.length - 1];
    // Carry the last segment over only when it is short enough to leave room for new speech.
    current = options.overlap && carried && carried.end - carried.start < options.minSeconds / 2 ? [carried] : [];
    fresh = 0;
  };
  for (const segment of segments) {
    const start = current[0]?.start ?? segment.start;
    if (fresh > 0 && segment.end - start > options.maxSeconds) close();
    current.push(segment);
    fresh++;
    if (segment.end - (current[0]?.start ?? segment.start) >= options.minSeconds) close();
  }
  if (fresh > 0) chunks.push(toChunk(chunks.length, current, options.dominantShare));
  return chunks;
}
