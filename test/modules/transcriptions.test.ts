import { beforeAll, describe, expect, test } from "bun:test";
import type { Engines } from "../../src/engines";
import { SingleSpeakerDiarizer } from "../../src/engines/diarizer";
import { ScriptedLlm } from "../../src/engines/llm.test-double";
import { TwoSpeakerTestDiarizer } from "../../src/engines/diarizer.test-double";
import { MissingModelError } from "../../src/engines/missing-model";
import { ScriptedTranscriber, type TranscriberScript } from "../../src/engines/transcriber.test-double";
import type { Tenant } from "../../src/tenancy";
import { findRecording } from "../../src/modules/recordings/store";
import { latestCompletedTranscription } from "../../src/modules/transcriptions/store";
import { makeTenant, makeTestApp } from "../helpers";
import { concat, eventsOf, seedRecording, silence, voiced, wav } from "./pipeline-fixtures";

type TestApp = Awaited<ReturnType<typeof makeTestApp>>;

/**
 * A test app on the real ffmpeg decoding and Silero VAD, with test doubles for the
 * models too big for CI: a scripted transcriber ("utterance N" per call, so tests
 * can see what audio was sent) and a scripted LLM.
 */
function pipelineApp(script: TranscriberScript = {}, env: Record<string, string> = {}, extra: Partial<Engines> = {}) {
  // Synthetic tones are no voices: the classic diarizer hears several "speakers" in them (decision 097).
  const engines = { transcriber: new ScriptedTranscriber(script), llm: new ScriptedLlm(), diarizer: new SingleSpeakerDiarizer(), ...extra };
  return makeTestApp({ engines, env });
}

const RECORD_FIELDS = [
  "completed_at",
  "created_at",
  "diarization",
  "duration_seconds",
  "error",
  "failed_at",
  "id",
  "language",
  "model",
  "recording_id",
  "revision",
  "segments",
  "speaker_turns",
  "speakers",
  "started_at",
  "status",
  "text",
];

let t: TestApp;
let acme: ReturnType<typeof makeTenant>;
let tenant: Tenant;

beforeAll(async () => {
  t = await pipelineApp();
  acme = makeTenant(t.deps, "acme");
  tenant = { projectId: acme.project.id, mode: "test" };
});

const speech = wav(concat(voiced(2), silence(3), voiced(2)));

async function transcribe(app: TestApp, key: string, recordingId: string, extra: object = {}) {
  const r = await app.call("POST", "/v1/transcriptions", { key, body: { recording_id: recordingId, ...extra } });
  expect(r.status).toBe(202);
  await app.deps.queue.drain();
  return (await app.call("GET", `/v1/transcriptions/${r.body.id}`, { key })).body;
}

describe("transcriptions: happy path", () => {
  test("POST answers 202 processing, the job completes it with segments, speakers and events", async () => {
    const rec = await seedRecording(t.deps, tenant, speech);
    const r = await t.call("POST", "/v1/transcriptions", { key: acme.test, body: { recording_id: rec } });
    expect(r.status).toBe(202);
    expect(r.body.id).toMatch(/^txn_/);
    expect(Object.keys(r.body).sort()).toEqual(RECORD_FIELDS);
    expect(r.body).toMatchObject({
      recording_id: rec,
      status: "processing",
      language: null,
      text: null,
      segments: [],
      speakers: [],
      error: null,
      completed_at: null,
    });
    expect(r.body.started_at).toBe(r.body.created_at);
    expect(findRecording(t.deps.db, tenant, rec)?.status).toBe("processing");

    const started = eventsOf(t.deps, "transcription.started").find((e) => e.data.id === r.body.id)!;
    expect(Object.keys(started.data).sort()).toEqual(["created_at", "id", "language", "recording_id", "started_at", "status"]);

    await t.deps.queue.drain();
    const done = (await t.call("GET", `/v1/transcriptions/${r.body.id}`, { key: acme.test })).body;
    expect(done).toMatchObject({
      status: "completed",
      language: "en",
      duration_seconds: 7,
      text: "utterance 1",
      model: "test-scripted-transcriber",
      diarization: "none",
      error: null,
    });
    // One call over the two bursts' speech; the segment opens where Silero first hears speech,
    // less the 0.2 s padding, and closes where the second burst ends.
    expect(done.segments).toEqual([{ start: expect.any(Number), end: 7, text: "utterance 1", speaker: "SPEAKER_1", confidence: 0.9 }]);
    expect(done.segments[0].start).toBeLessThan(0.5);
    expect(done.speakers).toEqual([{ id: "SPEAKER_1", label: "Speaker 1" }]);
    expect(done.completed_at).not.toBeNull();
    expect(findRecording(t.deps.db, tenant, rec)?.status).toBe("completed");

    const completed = eventsOf(t.deps, "transcription.completed").find((e) => e.data.id === r.body.id)!;
    expect(Object.keys(completed.data).sort()).toEqual([
      "completed_at",
      "created_at",
      "duration_seconds",
      "id",
      "language",
      "recording_id",
      "segments",
      "speakers",
      "status",
      "text",
    ]);
    expect(completed.data.segments).toEqual(done.segments);
    const index = t.deps.db.query("SELECT payload FROM jobs WHERE type = 'search.index_transcription'").all() as { payload: string }[];
    expect(index.map((j) => JSON.parse(j.payload))).toContainEqual({ project_id: tenant.projectId, mode: "test", transcription_id: r.body.id });
  });

  test("silence is skipped: the speech alone is decoded, joined, and the segments' times are mapped back to the recording", async () => {
    // The engine hears 10 s of speech, 10 s of silence, 10 s of speech as ~20.8 s of speech
    // (each burst widened by 0.2 s); it answers a segment over its first 10 s and one over its last 10 s.
    const heard: number[] = [];
    const segments = (pcm: Float32Array) => {
      const seconds = pcm.length / 16_000;
      heard.push(seconds);
      return [
        { start: 0, end: 10, text: " first", confidence: 0.9 },
        { start: seconds - 10, end: seconds, text: " second", confidence: 0.9 },
      ];
    };
    const app = await pipelineApp({ segments });
    const key = makeTenant(app.deps).test;
    const projectId = app.deps.db.query<{ project_id: string }, []>("SELECT project_id FROM credentials ORDER BY created_at LIMIT 1").get()!.project_id;
    const done = await transcribe(app, key, await seedRecording(app.deps, { projectId, mode: "test" }, wav(concat(voiced(10), silence(10), voiced(10)))), {
      language: "de",
    });
    expect(done.language).toBe("de");
    expect(done.duration_seconds).toBe(30);
    expect(heard).toHaveLength(1);
    expect(heard[0]).toBeGreaterThan(20);
    expect(heard[0]).toBeLessThan(22);
    const [first, second] = done.segments;
    expect(done.segments.map((s: any) => s.text)).toEqual(["first", "second"]);
    // Each lands on its own burst (within a few VAD frames and the padding): the second moved
    // past the ~10 s of silence the engine never heard.
    expect(first.start).toBeLessThan(0.5);
    expect(first.end).toBeGreaterThan(9.5);
    expect(first.end).toBeLessThan(10.5);
    expect(second.start).toBeGreaterThan(19.5);
    expect(second.start).toBeLessThan(20.5);
    expect(second.end).toBe(30);
  });

  test("a recording that is nearly all speech is decoded whole: one call over all of it, times as the engine gives them", async () => {
    const heard: number[] = [];
    const app = await pipelineApp({
      segments: (pcm) => (heard.push(pcm.length), [{ start: 0, end: pcm.length / 16_000, text: " all of it", confidence: 0.9 }]),
    });
    const key = makeTenant(app.deps).test;
    const projectId = app.deps.db.query<{ project_id: string }, []>("SELECT project_id FROM credentials ORDER BY created_at LIMIT 1").get()!.project_id;
    const done = await transcribe(app, key, await seedRecording(app.deps, { projectId, mode: "test" }, wav(voiced(70))));
    expect(heard).toEqual([70 * 16_000]);
    expect(done.segments.map((s: any) => [s.start, s.end])).toEqual([[0, 70]]);
  });

  test("a segment the engine cannot score gets the VAD's speech probability as confidence; a scored one keeps its own", async () => {
    // Per window: a segment over the first voiced second, unscored, then one the engine scored.
    const segments = () => [
      { start: 0.3, end: 1.3, text: " voiced", confidence: null },
      { start: 1.3, end: 1.8, text: " scored", confidence: 0.42 },
    ];
    const app = await pipelineApp({ segments });
    const key = makeTenant(app.deps).test;
    const projectId = app.deps.db.query<{ project_id: string }, []>("SELECT project_id FROM credentials ORDER BY created_at LIMIT 1").get()!.project_id;
    const done = await transcribe(app, key, await seedRecording(app.deps, { projectId, mode: "test" }, speech));
    const [voicedSegment, scored] = done.segments;
    expect(voicedSegment.confidence).toBeGreaterThan(0.5);
    expect(voicedSegment.confidence).toBeLessThanOrEqual(1);
    expect(scored.confidence).toBe(0.42);
  });

  test("with a diarizer, segments carry its speaker labels and speakers lists each speaker once, in order of appearance", async () => {
    // The transcriber hears the two bursts (0-2 s and 5-7 s) joined, silence skipped: part 0
    // lies in the first burst, parts 1 and 2 in the second (about 5.1-6.1 s and 6.2-6.8 s of
    // the recording). The speakers take turns at 5 s and 6.15 s: part 0 is SPEAKER_1's, part 1
    // SPEAKER_2's, part 2 SPEAKER_1's again.
    const segments = () =>
      [
        [0.2, 1.8],
        [2.5, 3.5],
        [3.6, 4.2],
      ].map(([start, end], i) => ({ start: start!, end: end!, text: ` part ${i}`, confidence: 0.8 }));
    const app = await pipelineApp({ segments }, {}, { diarizer: new TwoSpeakerTestDiarizer([5, 6.15]) });
    const key = makeTenant(app.deps).test;
    const projectId = app.deps.db.query<{ project_id: string }, []>("SELECT project_id FROM credentials ORDER BY created_at LIMIT 1").get()!.project_id;
    const rec = await seedRecording(app.deps, { projectId, mode: "test" }, speech);
    const done = await transcribe(app, key, rec);
    expect(done).toMatchObject({ status: "completed", diarization: "classic", text: "part 0 part 1 part 2" });
    expect(done.segments.map((s: any) => [s.text, s.speaker])).toEqual([
      ["part 0", "SPEAKER_1"],
      ["part 1", "SPEAKER_2"],
      ["part 2", "SPEAKER_1"],
    ]);
    expect(done.speakers).toEqual([
      { id: "SPEAKER_1", label: "Speaker 1" },
      { id: "SPEAKER_2", label: "Speaker 2" },
    ]);
    const event = eventsOf(app.deps, "transcription.completed").find((e) => e.data.id === done.id)!;
    expect(event.data.speakers).toEqual(done.speakers);
  });

  test("list by recording_id, newest first; reprocessing adds a transcription and keeps the old one", async () => {
    const rec = await seedRecording(t.deps, tenant, speech);
    const first = await transcribe(t, acme.test, rec);
    t.clock.advance(1000);
    const second = await transcribe(t, acme.test, rec);
    expect(second.id).not.toBe(first.id);
    expect(second.status).toBe("completed");
    const list = await t.call("GET", `/v1/transcriptions?recording_id=${rec}`, { key: acme.test });
    expect(list.body).toMatchObject({ has_more: false, total: 2 });
    expect(list.body.data.map((x: any) => x.id)).toEqual([second.id, first.id]);
    expect(latestCompletedTranscription(t.deps.db, tenant, rec)?.id).toBe(second.id);
  });

  test("Idempotency-Key replays the first answer without a second transcription", async () => {
    const rec = await seedRecording(t.deps, tenant, speech);
    const headers = { "idempotency-key": `txn-${rec}` };
    const a = await t.call("POST", "/v1/transcriptions", { key: acme.test, headers, body: { recording_id: rec } });
    const b = await t.call("POST", "/v1/transcriptions", { key: acme.test, headers, body: { recording_id: rec } });
    expect(b.status).toBe(202);
    expect(b.body.id).toBe(a.body.id);
    expect(b.headers.get("idempotent-replayed")).toBe("true");
    await t.deps.queue.drain();
  });
});

describe("transcriptions: errors", () => {
  test("unknown recording is 404 resource_not_found; unknown transcription 404 not_found", async () => {
    const r = await t.call("POST", "/v1/transcriptions", { key: acme.test, body: { recording_id: "rec_nope" } });
    expect(r.status).toBe(404);
    expect(r.body.error).toMatchObject({ code: "resource_not_found", param: "recording_id" });
    expect((await t.call("GET", "/v1/transcriptions/txn_nope", { key: acme.test })).body.error.code).toBe("not_found");
  });

  test("a recording without uploaded audio is 409", async () => {
    const rec = await seedRecording(t.deps, tenant, null);
    const r = await t.call("POST", "/v1/transcriptions", { key: acme.test, body: { recording_id: rec } });
    expect(r.status).toBe(409);
    expect(r.body.error.code).toBe("resource_conflict");
  });

  test("a second request while one is processing is 409", async () => {
    const rec = await seedRecording(t.deps, tenant, speech);
    expect((await t.call("POST", "/v1/transcriptions", { key: acme.test, body: { recording_id: rec } })).status).toBe(202);
    const again = await t.call("POST", "/v1/transcriptions", { key: acme.test, body: { recording_id: rec } });
    expect(again.status).toBe(409);
    expect(again.body.error.message).toContain("still processing");
    await t.deps.queue.drain();
  });

  test.each([
    [{}, "recording_id"],
    [{ recording_id: "" }, "recording_id"],
    [{ recording_id: "rec_x", language: "English!" }, "language"],
    // Well-formed but unknown to Whisper: on a multilingual model it would never finish.
    [{ recording_id: "rec_x", language: "zz" }, "language"],
    [{ recording_id: "rec_x", language: "zz-BR" }, "language"],
  ])("body %j is 422 naming %s", async (body, param) => {
    const r = await t.call("POST", "/v1/transcriptions", { key: acme.test, body });
    expect(r.status).toBe(422);
    expect(r.body.error).toMatchObject({ code: "validation_error", param });
  });

  test("an unknown field is 422 naming it, not silently ignored", async () => {
    const r = await t.call("POST", "/v1/transcriptions", { key: acme.test, body: { recording_id: "rec_x", langauge: "de" } });
    expect(r.status).toBe(422);
    expect(r.body.error.code).toBe("validation_error");
    expect(r.body.error.message).toContain("Unknown field langauge");
  });

  test("a regional tag is accepted and recorded as the language Whisper transcribes (pt-BR as pt)", async () => {
    const rec = await seedRecording(t.deps, tenant, speech);
    const r = await t.call("POST", "/v1/transcriptions", { key: acme.test, body: { recording_id: rec, language: "pt-BR" } });
    expect(r.status).toBe(202);
    expect(r.body.language).toBe("pt");
    await t.deps.queue.drain();
  });

  test.each(["zz", "pt-XX-", "english"])("configuring language %s is 422 naming language", async (language) => {
    const r = await t.call("PUT", "/v1/config/project", { key: acme.test, body: { language } });
    expect(r.status).toBe(422);
    expect(r.body.error).toMatchObject({ code: "validation_error", param: "language" });
  });
});

describe("transcriptions: failure codes", () => {
  async function failure(app: TestApp, key: string, bytes: Uint8Array, options: Parameters<typeof seedRecording>[3] = {}) {
    const appTenant = {
      projectId: app.deps.db.query<{ project_id: string }, []>("SELECT project_id FROM credentials ORDER BY created_at LIMIT 1").get()!.project_id,
      mode: "test" as const,
    };
    const rec = await seedRecording(app.deps, appTenant, bytes, options);
    const done = await transcribe(app, key, rec);
    expect(done.status).toBe("failed");
    expect(done.failed_at).not.toBeNull();
    // The audio's own failures fail the recording; the appliance's leave it uploaded (decision 129).
    expect(findRecording(app.deps.db, appTenant, rec)?.status).toBe(["processing_error", "timeout"].includes(done.error.code) ? "uploaded" : "failed");
    const event = eventsOf(app.deps, "transcription.failed").find((e) => e.data.id === done.id)!;
    expect(Object.keys(event.data).sort()).toEqual(["created_at", "error", "failed_at", "id", "recording_id", "status"]);
    expect(event.data.error).toEqual(done.error);
    return done.error as { code: string; message: string };
  }

  test("audio under 1 s is audio_too_short", async () => {
    expect((await failure(t, acme.test, wav(voiced(0.5)))).code).toBe("audio_too_short");
  });

  test("silence is audio_quality_insufficient, not hallucinated text", async () => {
    expect((await failure(t, acme.test, wav(silence(3)))).code).toBe("audio_quality_insufficient");
  });

  test("a file that is not audio, or one flagged by upload probing, is audio_format_unsupported", async () => {
    expect((await failure(t, acme.test, new TextEncoder().encode("this is not audio at all\n".repeat(50)))).code).toBe("audio_format_unsupported");
    const flagged = { code: "audio_format_unsupported", message: "The file is not audio ffmpeg can decode." };
    expect(await failure(t, acme.test, speech, { error: flagged })).toEqual(flagged);
  });

  test("an engine error is processing_error pointing at parley doctor; a missing model names the install command", async () => {
    const broken = await pipelineApp({ error: new Error("whisper exploded") });
    const key = makeTenant(broken.deps).test;
    expect(await failure(broken, key, speech)).toEqual({
      code: "processing_error",
      message: "Transcription failed: whisper exploded. Check the engines with: parley doctor.",
    });
    const missing = await pipelineApp({ error: new MissingModelError("whisper-base.en", "whisper", "models/ggml-base.en.bin") });
    const error = await failure(missing, makeTenant(missing.deps).test, speech);
    expect(error.code).toBe("processing_error");
    expect(error.message).toContain("models pull whisper-base.en");
  });

  test("an engine that never answers is stopped by the time limit: timeout", async () => {
    const slow = await pipelineApp({ hang: true }, { PARLEY_PROCESSING_MIN_SECONDS: "0.3", PARLEY_PROCESSING_TIME_FACTOR: "0" });
    const error = await failure(slow, makeTenant(slow.deps).test, speech);
    expect(error.code).toBe("timeout");
  });
});
