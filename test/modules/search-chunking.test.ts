import { describe, expect, test } from "bun:test";
import { chunkSegments, type TranscriptSegment } from "../../src/modules/search/chunking";

const seg = (start: number, end: number, speaker: string | null, text = `words ${start}`): TranscriptSegment => ({
  start,
  end,
  speaker,
  text,
  confidence: 0.9,
});

describe("chunking", () => {
  test("cuts on segment boundaries into 30-60 s chunks with a one-segment overlap", () => {
    const segments = Array.from({ length: 20 }, (_, i) => seg(i * 10, i * 10 + 10, "A"));
    const chunks = chunkSegments(segments);
    for (const c of chunks.slice(0, -1)) {
      expect(c.endMs - c.startMs).toBeGreaterThanOrEqual(30_000);
      expect(c.endMs - c.startMs).toBeLessThanOrEqual(60_000);
    }
    // Every boundary is a segment boundary, and each chunk starts with the previous one's last segment.
    chunks.slice(1).forEach((c, i) => expect(c.startMs).toBe(chunks[i]!.endMs - 10_000));
    expect(chunks[0]!.startMs).toBe(0);
    expect(chunks.at(-1)!.endMs).toBe(200_000);
    expect(chunks.map((c) => c.seq)).toEqual(chunks.map((_, i) => i));
  });

  test("a long segment is not carried over, and nothing is lost or duplicated beyond the overlap", () => {
    const chunks = chunkSegments([seg(0, 40, "A", "alpha"), seg(40, 45, "A", "beta"), seg(45, 90, "B", "gamma")]);
    expect(chunks.map((c) => c.text)).toEqual(["alpha", "beta gamma"]);
  });

  test("a segment that would pass 60 s closes the chunk before it", () => {
    const chunks = chunkSegments([seg(0, 20, "A", "one"), seg(20, 25, "A", "two"), seg(25, 90, "A", "three")]);
    expect(chunks[0]).toMatchObject({ startMs: 0, endMs: 25_000, text: "one two" });
  });

  test("dominant speaker needs two thirds of the speech; mixed or unknown is null", () => {
    expect(chunkSegments([seg(0, 25, "A"), seg(25, 30, "B")])[0]!.speaker).toBe("A");
    expect(chunkSegments([seg(0, 15, "A"), seg(15, 30, "B")])[0]!.speaker).toBeNull();
    expect(chunkSegments([seg(0, 30, null)])[0]!.speaker).toBeNull();
  });

  test("empty text is skipped and an empty transcript has no chunks", () => {
    expect(chunkSegments([])).toEqual([]);
    expect(chunkSegments([seg(0, 5, "A", "  ")])).toEqual([]);
    expect(chunkSegments([seg(0, 5, "A", "short")])).toEqual([{ seq: 0, startMs: 0, endMs: 5000, speaker: "A", text: "short" }]);
  });

  test("a long segment with timed words is cut between its words: no chunk passes 60 s, every edge is a word's", () => {
    // One 150 s segment as an engine that hears long audio in one pass gives it: a word every 0.5 s.
    const words = Array.from({ length: 300 }, (_, i) => ({ start: i * 0.5, end: i * 0.5 + 0.4, text: `w${i}` }));
    const long: TranscriptSegment = { ...seg(0, 150, "A", words.map((w) => w.text).join(" ")), words };
    const chunks = chunkSegments([long]);
    expect(chunks.length).toBeGreaterThan(2);
    const starts = new Set(words.map((w) => Math.round(w.start * 1000)));
    const ends = new Set(words.map((w) => Math.round(w.end * 1000)));
    for (const c of chunks) {
      expect(c.endMs - c.startMs).toBeLessThanOrEqual(60_000);
      expect(starts.has(c.startMs)).toBe(true);
      expect(ends.has(c.endMs) || c.endMs === 150_000).toBe(true);
      // A chunk's text is whole words, the ones its times span.
      const spanned = words.filter((w) => w.start * 1000 >= c.startMs && w.end * 1000 <= c.endMs).map((w) => w.text);
      expect(c.text).toBe(spanned.join(" "));
    }
    // Nothing lost: every word is in a chunk.
    const said = new Set(chunks.flatMap((c) => c.text.split(" ")));
    expect(words.every((w) => said.has(w.text))).toBe(true);
  });

  test("the same long segment without words stays one chunk (no times to cut it by)", () => {
    expect(chunkSegments([seg(0, 150, "A", "one long stretch")])).toHaveLength(1);
  });
});
