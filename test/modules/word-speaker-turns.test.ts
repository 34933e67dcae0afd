import { describe, expect, test } from "bun:test";
import { conversation, script } from "../../scripts/test-audio/espeak-conversation";
import { ScriptedTranscriber } from "../../src/engines/transcriber.test-double";
import { assignSpeakers } from "../../src/modules/transcriptions/speaker-assignment";
import { makeTenant, makeTestApp } from "../helpers";
import { seedRecording, wav } from "./pipeline-fixtures";

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

  test("in the pipeline (espeak-ng voices, classic diarizer): one long segment with words becomes one segment per turn, cut between words", async () => {
    const talk = conversation(script([0, 1, 0, 1]));
    // One segment over all the audio sent, a timed word every 0.25 s, as an engine with word times gives it.
    const oneTimedSegment = (pcm: Float32Array) => {
      const seconds = pcm.length / 16_000;
      const timed = Array.from({ length: Math.floor(seconds * 4) }, (_, i) => ({ start: i / 4, end: i / 4 + 0.2, text: `w${i}`, confidence: 0.9 }));
      return [{ start: 0, end: seconds, text: timed.map((w) => w.text).join(" "), confidence: 0.9, words: timed }];
    };
    const app = await makeTestApp({ engines: { transcriber: new ScriptedTranscriber({ segments: oneTimedSegment }) } });
    const tenant = makeTenant(app.deps);
    const rec = await seedRecording(app.deps, { projectId: tenant.project.id, mode: "test" }, wav(talk.pcm));
    const created = await app.call("POST", "/v1/transcriptions", { key: tenant.test, body: { recording_id: rec } });
    await app.deps.queue.drain();
    const txn = (await app.call("GET", `/v1/transcriptions/${created.body.id}`, { key: tenant.test })).body;

    expect(txn.segments.map((s: { speaker: string }) => s.speaker)).toEqual(["SPEAKER_1", "SPEAKER_2", "SPEAKER_1", "SPEAKER_2"]);
    const all = txn.segments.flatMap((s: { words: { text: string }[] }) => s.words.map((w) => w.text));
    // Nothing lost, duplicated or reordered: every word once, in order, in the part its time falls in.
    expect(all).toEqual(all.map((_: string, i: number) => `w${i}`));
    for (const s of txn.segments) {
      expect(s.text).toBe(s.words.map((w: { text: string }) => w.text).join(" "));
      expect(s.words[0].start).toBeGreaterThanOrEqual(s.start);
      expect(s.words.at(-1).end).toBeLessThanOrEqual(s.end);
    }
    // Each cut is a word's edge, within a second of the true change.
    txn.segments.slice(1).forEach((s: { start: number; words: { start: number }[] }, i: number) => {
      expect(s.start).toBe(s.words[0]!.start);
      expect(txn.segments[i].end).toBe(txn.segments[i].words.at(-1).end);
      const change = (talk.turns[i]!.end + talk.turns[i + 1]!.start) / 2;
      expect(Math.abs(s.start - change)).toBeLessThan(1);
    });
  }, 120_000);
});
