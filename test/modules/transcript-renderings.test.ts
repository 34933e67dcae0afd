import { describe, expect, test } from "bun:test";
import { renderSrt, renderTxt, renderVtt } from "../../src/modules/transcriptions/renderings";
import { ScriptedTranscriber } from "../../src/engines/transcriber.test-double";
import { TwoSpeakerTestDiarizer } from "../../src/engines/diarizer.test-double";
import { makeTenant, makeTestApp } from "../helpers";
import { concat, seedRecording, silence, voiced, wav } from "./pipeline-fixtures";

const transcript = {
  speakers: [
    { id: "SPEAKER_1", label: "Dr. Weber" },
    { id: "SPEAKER_2", label: "Speaker 2" },
  ],
  segments: [
    { start: 0.5, end: 2.25, text: "Good morning.", speaker: "SPEAKER_1", confidence: 0.9 },
    { start: 2.25, end: 3, text: "What brings you in?", speaker: "SPEAKER_1", confidence: 0.9 },
    { start: 3.5, end: 3725.125, text: "A cough <since> Monday.", speaker: "SPEAKER_2", confidence: 0.8 },
  ],
};

describe("transcript renderings carry speaker names", () => {
  test("SRT: numbered cues led by the speaker's label", () => {
    expect(renderSrt(transcript)).toBe(
      "1\n00:00:00,500 --> 00:00:02,250\nDr. Weber: Good morning.\n\n2\n00:00:02,250 --> 00:00:03,000\nDr. Weber: What brings you in?\n\n3\n00:00:03,500 --> 01:02:05,125\nSpeaker 2: A cough <since> Monday.\n",
    );
  });

  test("WebVTT: a voice span per cue, markup in the words escaped", () => {
    expect(renderVtt(transcript)).toBe(
      "WEBVTT\n\n00:00:00.500 --> 00:00:02.250\n<v Dr. Weber>Good morning.\n\n00:00:02.250 --> 00:00:03.000\n<v Dr. Weber>What brings you in?\n\n00:00:03.500 --> 01:02:05.125\n<v Speaker 2>A cough &lt;since> Monday.\n",
    );
  });

  test("TXT: one paragraph per turn", () => {
    expect(renderTxt(transcript)).toBe("[00:00:00] Dr. Weber: Good morning. What brings you in?\n\n[00:00:03] Speaker 2: A cough <since> Monday.\n");
  });
});

describe("GET /transcriptions/{id}/transcript", () => {
  test("renders a finished transcription in each format with its content type; 409 before it completes; 422 for another format", async () => {
    // The bursts at 0-2 s and 5-7 s reach the transcriber joined: part 0 lies in the first,
    // parts 1 and 2 in the second, where the speakers change at 5 s and 6.15 s.
    const segments = () =>
      [
        [0.2, 1.8],
        [2.5, 3.5],
        [3.6, 4.2],
      ].map(([start, end], i) => ({ start: start!, end: end!, text: ` part ${i}`, confidence: 0.8 }));
    const app = await makeTestApp({ engines: { transcriber: new ScriptedTranscriber({ segments }), diarizer: new TwoSpeakerTestDiarizer([5, 6.15]) } });
    const tenant = makeTenant(app.deps);
    const rec = await seedRecording(app.deps, { projectId: tenant.project.id, mode: "test" }, wav(concat(voiced(2), silence(3), voiced(2))));
    const posted = await app.call("POST", "/v1/transcriptions", { key: tenant.test, body: { recording_id: rec } });
    const early = await app.call("GET", `/v1/transcriptions/${posted.body.id}/transcript`, { key: tenant.test });
    expect(early.status).toBe(409);
    expect(early.body.error.code).toBe("transcription_not_ready");
    await app.deps.queue.drain();
    const url = (format: string) => `/v1/transcriptions/${posted.body.id}/transcript?format=${format}`;
    const expected = {
      srt: ["application/x-subrip", "Speaker 2: part 1"],
      vtt: ["text/vtt", "<v Speaker 1>part 0"],
      txt: ["text/plain", "] Speaker 2: part 1"],
    };
    for (const [format, [type, line]] of Object.entries(expected)) {
      const r = await app.call("GET", url(format), { key: tenant.test });
      expect(r.status).toBe(200);
      expect(r.headers.get("content-type")).toStartWith(type!);
      expect(r.body).toContain(line!);
    }
    expect((await app.call("GET", url("docx"), { key: tenant.test })).status).toBe(422);
    expect((await app.call("GET", "/v1/transcriptions/txn_nope/transcript", { key: tenant.test })).status).toBe(404);
  });
});
