import { describe, expect, test } from "bun:test";
import { assignSpeakers } from "../../src/modules/transcriptions/speaker-assignment";

// Eight quick words in the first 4.8 s, then two drawn-out ones to 10 s: spread by letters,
// the change at 5 s would fall after the seventh word; by the engine's times it falls after the eighth.
const quick = ["we", "can", "ship", "it", "on", "the", "next", "train"].map((text, i) => ({ start: i * 0.6, end: i * 0.6 + 0.5, text, confidence: 0.9 }));
const slow = [
  { start: 5.2, end: 7.5, text: "wonderful", confidence: 0.8 },
  { start: 7.6, end: 10, text: "news", confidence: 0.7 },
];
const words = [...quick, ...slow];
const segment = { start: 0, end: 10, text: words.map((w) => w.text).join(" "), confidence: 0.85 };
const turns = [
  { speaker: "A", start: 0, end: 4.9 },
  { speaker: "B", start: 5.1, end: 10 },
];

describe("speaker turns aligned to words", () => {
  test("a segment with timed words is cut at the word boundary nearest the change, each part keeping its words", () => {
    const { segments } = assignSpeakers([{ ...segment, words }], turns);
    expect(segments).toEqual([
      { start: 0, end: 4.7, text: "we can ship it on the next train", confidence: 0.85, speaker: "SPEAKER_1", words: quick },
      { start: 5.2, end: 10, text: "wonderful news", confidence: 0.85, speaker: "SPEAKER_2", words: slow },
    ]);
  });

  test("without words the cut falls where the letters put it (the estimate the words replace)", () => {
    const { segments } = assignSpeakers([segment], turns);
    expect(segments.map((s) => s.text)).toEqual(["we can ship it on the next", "train wonderful news"]);
    expect(segments.every((s) => !("words" in s))).toBe(true);
  });

  test("parts that go to the same speaker are joined again with their words", () => {
    // B's short turn is the only change inside; the part after the cut is still mostly A's.
    const aba = [turns[0]!, { speaker: "B", start: 5.1, end: 5.6 }, { speaker: "A", start: 5.8, end: 10 }];
    const { segments } = assignSpeakers([{ ...segment, words }], aba);
    expect(segments).toEqual([{ ...segment, words, speaker: "SPEAKER_1" }]);
  });
});
