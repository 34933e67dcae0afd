import { describe, expect, test } from "bun:test";
import { type ParakeetToken, segmentsFromTokens } from "../../src/engines/parakeet-words";

const token = (text: string, t0: number, t1: number, p = 0.9): ParakeetToken => ({ text, t0, t1, p, wordStart: text.startsWith(" ") });

describe("Parakeet's tokens become words and segments", () => {
  test("pieces join their word, punctuation ends a sentence's segment, a pause ends another", () => {
    const segments = segmentsFromTokens(
      [
        token(" And", 240, 560, 1),
        token(" so", 560, 880, 0.8),
        token(",", 880, 880, 0.6),
        token(" my", 1040, 1280),
        token(" f", 1280, 1360, 1),
        token("ell", 1360, 1520, 0.5),
        token("ow", 1520, 1760, 0.6),
        token(".", 1760, 1760, 0.7),
        token(" Ask", 3300, 3600),
        token(" not", 5000, 5300), // 1.4 s after "Ask": a new segment
      ],
      10,
    );
    expect(segments.map((s) => s.text)).toEqual(["And so, my fellow.", "Ask", "not"]);
    const [first] = segments;
    expect(first!.words!.map((w) => [w.text, w.start, w.end])).toEqual([
      ["And", 0.24, 0.56],
      ["so,", 0.56, 0.88],
      ["my", 1.04, 1.28],
      ["fellow.", 1.28, 1.76],
    ]);
    expect(first!.words![3]!.confidence).toBeCloseTo((1 + 0.5 + 0.6 + 0.7) / 4);
    expect(first).toMatchObject({ start: 0.24, end: 1.76 });
    expect(first!.confidence).toBeCloseTo((1 + (0.8 + 0.6) / 2 + 0.9 + 0.7) / 4);
  });

  test("times are clamped to the audio, and a run of pieces without a word start is still a word", () => {
    const segments = segmentsFromTokens([token("x", 500, 700), token("y", 700, 1200)], 1);
    expect(segments).toHaveLength(1);
    expect(segments[0]!.words).toEqual([{ text: "xy", start: 0.5, end: 1, confidence: 0.9 }]);
  });

  test("no tokens, no segments", () => {
    expect(segmentsFromTokens([], 3)).toEqual([]);
  });
});
