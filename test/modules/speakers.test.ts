import { describe, expect, test } from "bun:test";
import { conversation, script, type TruthTurn } from "../../scripts/test-audio/espeak-conversation";
import { IDENTIFIERS_SCHEMA } from "../../src/modules/redaction/llm-pass";
import { ScriptedLlm } from "../../src/engines/llm.test-double";
import { ScriptedTranscriber, type TranscriberScript } from "../../src/engines/transcriber.test-double";
import { makeTenant, makeTestApp } from "../helpers";
import { seedRecording, wav } from "./pipeline-fixtures";

// Real speech (espeak-ng, two voices taking turns) through the real decoder, VAD and
// classic diarizer; only the transcriber is scripted, as no real Whisper model fits in CI.
const talk = conversation(script([0, 1, 0, 1]));
const bytes = wav(talk.pcm);

const truthAt = (turns: TruthTurn[], t: number) =>
  turns.reduce((best, turn) => (Math.abs((turn.start + turn.end) / 2 - t) < Math.abs((best.start + best.end) / 2 - t) ? turn : best)).speaker;

let llm: ScriptedLlm;

async function transcribed(
  script: TranscriberScript,
  body: object = {},
  setup?: (app: Awaited<ReturnType<typeof makeTestApp>>, key: string) => Promise<unknown>,
) {
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
    // The auto-summary's model is given the transcript line by line, each led by its speaker
    // (its other request is redaction's pass).
    const prompt = llm.requests
      .find((r) => r.jsonSchema !== IDENTIFIERS_SCHEMA)!
      .messages.map((m) => m.content)
      .join("\n");
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
    const configured = await transcribed({ segments: shortSegments }, {}, (app, key) =>
      app.call("PUT", "/v1/config/project", { key, body: { max_speakers: 1 } }),
    );
    expect(configured.diarization).toBe("none");
    // The request's hint wins over the configuration's.
    const overridden = await transcribed({ segments: shortSegments }, { min_speakers: 2 }, (app, key) =>
      app.call("PUT", "/v1/config/project", { key, body: { max_speakers: 1 } }),
    );
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

describe("PATCH /transcriptions/{id}/speakers", () => {
  async function twoSpeakerApp() {
    const app = await makeTestApp({ engines: { transcriber: new ScriptedTranscriber({ segments: oneLongSegment }), llm: new ScriptedLlm() } });
    const tenant = makeTenant(app.deps);
    const rec = await seedRecording(app.deps, { projectId: tenant.project.id, mode: "test" }, bytes);
    const posted = await app.call("POST", "/v1/transcriptions", { key: tenant.test, body: { recording_id: rec } });
    await app.deps.queue.drain();
    return { app, key: tenant.test, id: posted.body.id as string, rec };
  }

  test("names a speaker in the transcript and its renderings; naming again replaces the name, the diarizer's turns keep their ids", async () => {
    const { app, key, id } = await twoSpeakerApp();
    const r = await app.call("PATCH", `/v1/transcriptions/${id}/speakers`, { key, body: { SPEAKER_2: { name: "Dr. Weber" } } });
    expect(r.status).toBe(200);
    expect(r.body.speakers).toEqual([
      { id: "SPEAKER_1", label: "Speaker 1" },
      { id: "SPEAKER_2", label: "Dr. Weber" },
    ]);
    expect(r.body.segments.map((s: any) => s.speaker)).toEqual(["SPEAKER_1", "Dr. Weber", "SPEAKER_1", "Dr. Weber"]);
    expect((await app.call("GET", `/v1/transcriptions/${id}`, { key })).body).toEqual(r.body);
    expect((await app.call("GET", `/v1/transcriptions/${id}/transcript?format=vtt`, { key })).body).toContain("<v Dr. Weber>");
    const again = await app.call("PATCH", `/v1/transcriptions/${id}/speakers`, {
      key,
      body: { SPEAKER_2: { name: "Dr. Anna Weber" }, SPEAKER_1: { name: "Patient" } },
    });
    expect(again.body.segments.map((s: any) => s.speaker)).toEqual(["Patient", "Dr. Anna Weber", "Patient", "Dr. Anna Weber"]);
    expect(again.body.speaker_turns.map((t: any) => t.speaker)).toEqual(["SPEAKER_1", "SPEAKER_2", "SPEAKER_1", "SPEAKER_2"]);
  });

  test("a named speaker reaches the search chunks: a one-voice recording's chunk carries the name", async () => {
    const app = await makeTestApp({ engines: { transcriber: new ScriptedTranscriber({ segments: shortSegments }), llm: new ScriptedLlm() } });
    const tenant = makeTenant(app.deps);
    const rec = await seedRecording(app.deps, { projectId: tenant.project.id, mode: "test" }, wav(conversation(script([1, 1, 1])).pcm));
    const posted = await app.call("POST", "/v1/transcriptions", { key: tenant.test, body: { recording_id: rec } });
    await app.deps.queue.drain();
    const chunkSpeakers = () =>
      app.deps.db
        .query<{ speaker: string | null }, [string]>("SELECT speaker FROM chunks WHERE recording_id = ?")
        .all(rec)
        .map((c) => c.speaker);
    expect(chunkSpeakers()).toEqual(["SPEAKER_1"]);
    await app.call("PATCH", `/v1/transcriptions/${posted.body.id}/speakers`, { key: tenant.test, body: { SPEAKER_1: { name: "Ada" } } });
    await app.deps.queue.drain();
    expect(chunkSpeakers()).toEqual(["Ada"]);
  });

  test("errors: unknown speaker, a name like an id, a name another speaker has, an empty body, an unknown field, an unfinished transcription", async () => {
    const { app, key, id, rec } = await twoSpeakerApp();
    const patch = (body: unknown, target = id) => app.call("PATCH", `/v1/transcriptions/${target}/speakers`, { key, body });
    const cases: [unknown, string][] = [
      [{ SPEAKER_9: { name: "X" } }, "SPEAKER_9"],
      [{ SPEAKER_1: { name: "SPEAKER_2" } }, "SPEAKER_1.name"],
      [{ speaker_1: { name: "X" } }, "speaker_1"],
      [{ SPEAKER_1: { name: "" } }, "SPEAKER_1.name"],
      [{ SPEAKER_1: { name: "X", colour: "red" } }, "SPEAKER_1.colour"],
    ];
    for (const [body, param] of cases) {
      const r = await patch(body);
      expect(r.status).toBe(422);
      expect(r.body.error.param).toBe(param);
    }
    expect((await patch({})).status).toBe(422);
    await patch({ SPEAKER_1: { name: "Ada" } });
    expect((await patch({ SPEAKER_2: { name: "Ada" } })).body.error.param).toBe("SPEAKER_2.name");
    expect((await patch({ SPEAKER_1: { name: "X" } }, "txn_nope")).status).toBe(404);
    const running = await app.call("POST", "/v1/transcriptions", { key, body: { recording_id: rec } });
    expect((await patch({ SPEAKER_1: { name: "X" } }, running.body.id)).status).toBe(409);
  });
});
