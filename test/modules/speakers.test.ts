import { describe, expect, test } from "bun:test";
import { conversation, script, type TruthTurn } from "../../scripts/test-audio/espeak-conversation";
import { ScriptedLlm } from "../../src/engines/llm.test-double";
import { ScriptedTranscriber, type TranscriberScript } from "../../src/engines/transcriber.test-double";
import { makeTenant, makeTestApp } from "../helpers";
import { seedRecording, wav } from "./pipeline-fixtures";

// Real speech (espeak-ng, two voices taking turns) through the real decoder, VAD and
// classic diarizer; only the transcriber is scripted, as no real Whisper model fits in CI.
const talk = conversation(script([0, 1, 0, 1]));
const bytes = wav(talk.pcm);

const truthAt = (turns: TruthTurn[], t: number) => turns.reduce((best, turn) => (Math.abs((turn.start + turn.end) / 2 - t) < Math.abs((best.start + best.end) / 2 - t) ? turn : best)).speaker;

let llm: ScriptedLlm;

async function transcribed(script: TranscriberScript, body: object = {}, setup?: (app: Awaited<ReturnType<typeof makeTestApp>>, key: string) => Promise<unknown>) {
  llm = new ScriptedLlm();
  const app = await makeTestApp({ engines: { transcriber: new ScriptedTranscriber(script), llm } });
  const tenant = makeTenant(app.deps);
  await setup?.(app, tenant.test);
  const rec = await seedRecording(app.deps, { projectId: tenant.project.id, mode: "test" }, bytes);
  const r = await app.call("POST", "/v1/transcriptions", { key: tenant.test, body: { recording_id: rec, ...body } });
  expect(r.status).toBe(202);
  await app.deps.queue.drain();
  return (await app.call("GET", `/v1/transcriptions/${r.body.id}`, { key: tenant.test })).body;
}

/** Segments of about 1 s of the slice, one word each... */
const shortSegments = (pcm: Float32Array) =>
  Array.from({ length: Math.floor(pcm.length / 16_000) }, (_, i) => ({ start: i, end: i + 1, text: ` word${i}`, confidence: 0.9 }));
/** ...or one segment over the whole slice, a word every 0.25 s. */
const oneLongSegment = (pcm: Float32Array) => {
  const seconds = pcm.length / 16_000;
  return [{ start: 0, end: seconds, text: Array.from({ length: Math.floor(seconds * 4) }, (_, i) => ` w${i}`).join(""), confidence: 0.9 }];
};

describe("speakers in the pipeline (classic diarizer, espeak-ng speech)", () => {
  test("a two-voice recording comes back with two speakers at the right turns", async () => {
    const txn = await transcribed({ segments: shortSegments });
    expect(txn).toMatchObject({ status: "completed", diarization: "classic" });
    expect(txn.speakers).toEqual([
      { id: "SPEAKER_1", label: "Speaker 1" },
      { id: "SPEAKER_2", label: "Speaker 2" },
    ]);
    expect(txn.speaker_turns.map((t: any) => t.speaker)).toEqual(["SPEAKER_1", "SPEAKER_2", "SPEAKER_1", "SPEAKER_2"]);
    txn.speaker_turns.forEach((t: any, i: number) => {
      if (i > 0) expect(Math.abs(t.start - talk.turns[i]!.start)).toBeLessThan(1);
      if (i < 3) expect(Math.abs(t.end - talk.turns[i]!.end)).toBeLessThan(1);
    });
    // Every 1 s segment well inside a turn has that turn's speaker (voice 0 is SPEAKER_1).
    for (const s of txn.segments) {
      const inside = talk.turns.find((t) => s.start >= t.start + 0.5 && s.end <= t.end - 0.5);
      if (inside) expect(s.speaker).toBe(`SPEAKER_${inside.speaker + 1}`);
    }
  });

  test("a segment spanning turn changes is split between the words nearest each change", async () => {
    const txn = await transcribed({ segments: oneLongSegment });
    expect(txn.segments.map((s: any) => s.speaker)).toEqual(["SPEAKER_1", "SPEAKER_2", "SPEAKER_1", "SPEAKER_2"]);
    // The auto-summary's model is given the transcript line by line, each led by its speaker.
    const prompt = llm.requests[0]!.messages.map((m) => m.content).join("\n");
    for (const s of txn.segments) expect(prompt).toContain(`${s.speaker}: ${s.text}`);
    // Nothing lost or reordered, and each part is where its speaker spoke.
    expect(txn.segments.map((s: any) => s.text).join(" ")).toBe(txn.text);
    for (const s of txn.segments) expect(`SPEAKER_${truthAt(talk.turns, (s.start + s.end) / 2) + 1}`).toBe(s.speaker);
    txn.segments.slice(1).forEach((s: any, i: number) => expect(s.start).toBe(txn.segments[i].end));
  });

  test("max_speakers 1, from the request or the configuration, runs no diarizer", async () => {
    const asked = await transcribed({ segments: shortSegments }, { max_speakers: 1 });
    expect(asked).toMatchObject({ diarization: "none", speakers: [{ id: "SPEAKER_1", label: "Speaker 1" }] });
    expect(asked.speaker_turns.every((t: any) => t.speaker === "SPEAKER_1")).toBe(true);
    const configured = await transcribed({ segments: shortSegments }, {}, (app, key) => app.call("PUT", "/v1/config/project", { key, body: { max_speakers: 1 } }));
    expect(configured.diarization).toBe("none");
    // The request's hint wins over the configuration's.
    const overridden = await transcribed({ segments: shortSegments }, { min_speakers: 2 }, (app, key) => app.call("PUT", "/v1/config/project", { key, body: { max_speakers: 1 } }));
    expect(overridden).toMatchObject({ diarization: "classic" });
    expect(overridden.speakers).toHaveLength(2);
  });

  test("min_speakers 3 on two voices gives three", async () => {
    expect((await transcribed({ segments: shortSegments }, { min_speakers: 3 })).speakers).toHaveLength(3);
  });
});

describe("speaker hints: bad input", () => {
  test.each([
    [{ min_speakers: 3, max_speakers: 2 }, "min_speakers"],
    [{ max_speakers: 0 }, "max_speakers"],
    [{ min_speakers: 1.5 }, "min_speakers"],
    [{ max_speakers: 21 }, "max_speakers"],
  ])("POST %j is 422 naming %s", async (body, param) => {
    const app = await makeTestApp();
    const tenant = makeTenant(app.deps);
    const r = await app.call("POST", "/v1/transcriptions", { key: tenant.test, body: { recording_id: "rec_x", ...body } });
    expect(r.status).toBe(422);
    expect(r.body.error.param).toBe(param);
  });

  test("configuring max_speakers 0 is 422", async () => {
    const app = await makeTestApp();
    const tenant = makeTenant(app.deps);
    const r = await app.call("PUT", "/v1/config/project", { key: tenant.test, body: { max_speakers: 0 } });
    expect(r.status).toBe(422);
    expect(r.body.error.param).toBe("max_speakers");
  });
});
