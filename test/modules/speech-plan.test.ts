import { describe, expect, test } from "bun:test";
import { ensureTestModels } from "../../scripts/test-models/cache";
import { SingleSpeakerDiarizer } from "../../src/engines/diarizer";
import type { Transcriber } from "../../src/engines/transcriber";
import { SileroVad } from "../../src/engines/vad";
import { WhisperTranscriber } from "../../src/engines/whisper-transcriber";
import { transcribePcm } from "../../src/modules/transcriptions/pipeline";
import { planAudio, planSpeech, toOriginalTime, WHOLE_FILE_SPEECH_FRACTION } from "../../src/modules/transcriptions/speech-plan";
import { silence } from "../engines/signals";
import { spoken, VOICES } from "../engines/speech";
import { concat } from "./pipeline-fixtures";

describe("the speech plan", () => {
  const regions = [
    { start: 1, end: 4 },
    { start: 4.3, end: 6 }, // within the padding of the first: merged
    { start: 20, end: 25 },
  ];

  test("speech regions are padded, merged where they touch, and laid end to end", () => {
    const plan = planSpeech(regions, 40);
    expect(plan.mode).toBe("speech");
    expect(plan.spans).toEqual([
      { start: 0.8, end: 6.2, at: 0 },
      { start: 19.8, end: 25.2, at: expect.closeTo(5.4, 9) },
    ]);
    expect(plan.seconds).toBeCloseTo(10.8, 9);
    expect(plan.speechFraction).toBeCloseTo(10.8 / 40, 9);
  });

  test("times in the audio sent map back into the recording; a joint is the earlier span's end for an end, the later one's start for a start", () => {
    const plan = planSpeech(regions, 40);
    expect(toOriginalTime(plan, 0, "start")).toBeCloseTo(0.8, 9);
    expect(toOriginalTime(plan, 2, "end")).toBeCloseTo(2.8, 9);
    expect(toOriginalTime(plan, 5.4, "end")).toBeCloseTo(6.2, 9);
    expect(toOriginalTime(plan, 5.4, "start")).toBeCloseTo(19.8, 9);
    expect(toOriginalTime(plan, 7, "start")).toBeCloseTo(21.4, 9);
    // Whisper pads to 30 s, so a time can run past what was sent: it stays at the last span's end.
    expect(toOriginalTime(plan, 30, "end")).toBeCloseTo(25.2, 9);
  });

  test("the audio sent is the spans' samples end to end; a recording nearly all speech is sent whole, as it is", () => {
    const pcm = Float32Array.from({ length: 40 * 100 }, (_, i) => i);
    const plan = planSpeech(regions, 40);
    const sent = planAudio(plan, pcm, 100);
    expect(sent.length).toBe(540 + 540);
    expect([sent[0], sent[539], sent[540]]).toEqual([80, 619, 1980]);
    const whole = planSpeech([{ start: 0.5, end: 39.5 }], 40);
    expect(whole).toMatchObject({ mode: "whole", spans: [{ start: 0, end: 40, at: 0 }] });
    expect(whole.speechFraction).toBeGreaterThan(WHOLE_FILE_SPEECH_FRACTION);
    expect(planAudio(whole, pcm, 100)).toBe(pcm);
  });

  test("no speech, no spans", () => {
    expect(planSpeech([], 40).spans).toEqual([]);
  });
});

test("real speech with silence inserted, on Silero and a generated whisper model: silence is not decoded and every segment lies on speech", async () => {
  const lines = [
    "We reviewed the budget for the next quarter.",
    "I think the clinic needs two more nurses on Fridays.",
    "Let us meet again on Tuesday and decide.",
  ];
  const utterances = lines.map((line, i) => spoken(line, VOICES[i % 2]));
  const gaps = [7, 9];
  const pcm = concat(utterances[0]!, silence(gaps[0]!), utterances[1]!, silence(gaps[1]!), utterances[2]!);
  const seconds = (x: Float32Array) => x.length / 16_000;
  // Where the inserted silences are in the recording.
  const gap1 = { start: seconds(utterances[0]!), end: seconds(utterances[0]!) + gaps[0]! };
  const gap2 = { start: gap1.end + seconds(utterances[1]!), end: gap1.end + seconds(utterances[1]!) + gaps[1]! };

  const whisper = new WhisperTranscriber({ model: "tiny", path: ensureTestModels().whisper, gpu: "off", threads: 1, decoding: { temperatureInc: 0 } });
  const heard: number[] = [];
  const transcriber: Transcriber = { model: whisper.model, transcribe: (sent, options) => (heard.push(seconds(sent)), whisper.transcribe(sent, options)) };
  const result = await transcribePcm({ transcriber, vad: new SileroVad(), diarizer: new SingleSpeakerDiarizer() }, pcm, {
    language: "en",
    signal: new AbortController().signal,
  });

  // One call, on the speech alone: the 16 s of inserted silence were not sent.
  expect(heard).toHaveLength(1);
  expect(heard[0]).toBeLessThan(seconds(pcm) - (gaps[0]! + gaps[1]!) + 2);
  expect(heard[0]).toBeGreaterThan(seconds(pcm) - (gaps[0]! + gaps[1]!) - 3);
  expect(result.segments.length).toBeGreaterThan(0);
  // Mapped back, no segment starts or ends inside an inserted silence (past the 0.2 s padding
  // and a VAD frame), and they are in order within the recording.
  const inside = (t: number, gap: { start: number; end: number }) => t > gap.start + 0.5 && t < gap.end - 0.5;
  for (const s of result.segments) {
    expect([s.start, inside(s.start, gap1) || inside(s.start, gap2)]).toEqual([s.start, false]);
    expect([s.end, inside(s.end, gap1) || inside(s.end, gap2)]).toEqual([s.end, false]);
    expect(s.end).toBeLessThanOrEqual(seconds(pcm));
  }
  const starts = result.segments.map((s) => s.start);
  expect(starts).toEqual([...starts].sort((a, b) => a - b));
  // The decoded audio reaches the last utterance, which the engine heard ~16 s earlier than it is.
  expect(result.segments.at(-1)!.end).toBeGreaterThan(gap2.end);
});
