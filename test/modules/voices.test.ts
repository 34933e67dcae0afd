import { describe, expect, test } from "bun:test";
import { conversation, LINES, script, type Turn } from "../../scripts/test-audio/espeak-conversation";
import { ScriptedLlm } from "../../src/engines/llm.test-double";
import { ScriptedTranscriber } from "../../src/engines/transcriber.test-double";
import { makeTenant, makeTestApp } from "../helpers";
import { seedRecording, wav } from "./pipeline-fixtures";

// Known voices on real speech: espeak-ng voices through the real decoder, VAD, classic
// diarizer and its voiceprints; only the transcriber is scripted.
const shortSegments = (pcm: Float32Array) =>
  Array.from({ length: Math.floor(pcm.length / 16_000) }, (_, i) => ({ start: i, end: i + 1, text: ` word${i}`, confidence: 0.9 }));
/** Lines from `from` on, so a later recording says other sentences than the sample. */
const talk = (speakers: number[], from: number): Turn[] => speakers.map((speaker, i) => ({ speaker, text: LINES[(from + i) % LINES.length]! }));

async function voicesApp() {
  const app = await makeTestApp({ engines: { transcriber: new ScriptedTranscriber({ segments: shortSegments }), llm: new ScriptedLlm() } });
  const tenant = makeTenant(app.deps);
  const seed = (turns: Turn[], endUserId: string | null = null) =>
    seedRecording(app.deps, { projectId: tenant.project.id, mode: "test" }, wav(conversation(turns).pcm), { endUserId });
  const transcribe = async (rec: string) => {
    const r = await app.call("POST", "/v1/transcriptions", { key: tenant.test, body: { recording_id: rec } });
    await app.deps.queue.drain();
    return (await app.call("GET", `/v1/transcriptions/${r.body.id}`, { key: tenant.test })).body;
  };
  const prints = (voiceId: string) => app.deps.db.query<{ n: number }, [string]>("SELECT COUNT(*) AS n FROM voiceprints WHERE voice_id = ?").get(voiceId)!.n;
  return { app, tenant, key: tenant.test, seed, transcribe, prints };
}

describe("voices: CRUD", () => {
  test("create, get, list, rename, delete", async () => {
    const { app, key, tenant } = await voicesApp();
    const user = (await app.call("POST", "/v1/end-users", { key, body: { name: "Ada" } })).body;
    const created = await app.call("POST", "/v1/voices", { key, body: { name: "Ada", end_user_id: user.id } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: "Ada", end_user_id: user.id, sample_count: 0 });
    expect(created.body.id).toMatch(/^vox_/);
    expect((await app.call("GET", `/v1/voices/${created.body.id}`, { key })).body).toEqual(created.body);
    await app.call("POST", "/v1/voices", { key, body: { name: "Visitor" } });
    expect((await app.call("GET", "/v1/voices", { key })).body.total).toBe(2);
    expect((await app.call("GET", `/v1/voices?end_user_id=${user.id}`, { key })).body.data.map((v: any) => v.name)).toEqual(["Ada"]);
    const renamed = await app.call("PATCH", `/v1/voices/${created.body.id}`, { key, body: { name: "Ada L." } });
    expect(renamed.body).toMatchObject({ name: "Ada L.", end_user_id: user.id });
    // A key confined to another end user sees none of Ada's voice.
    const other = (await app.call("POST", "/v1/end-users", { key, body: { name: "Bob" } })).body;
    const bobsKey = tenant.key("test", { endUserId: other.id });
    expect((await app.call("GET", `/v1/voices/${created.body.id}`, { key: bobsKey })).status).toBe(404);
    expect((await app.call("GET", "/v1/voices", { key: bobsKey })).body.data).toEqual([]);
    expect((await app.call("DELETE", `/v1/voices/${created.body.id}`, { key })).status).toBe(204);
    expect((await app.call("GET", `/v1/voices/${created.body.id}`, { key })).status).toBe(404);
  });

  test("errors: unknown end user, empty name, unknown field", async () => {
    const { app, key } = await voicesApp();
    const unknown = await app.call("POST", "/v1/voices", { key, body: { name: "X", end_user_id: "eu_nope" } });
    expect([unknown.status, unknown.body.error.code, unknown.body.error.param]).toEqual([404, "resource_not_found", "end_user_id"]);
    expect((await app.call("POST", "/v1/voices", { key, body: { name: " " } })).body.error.param).toBe("name");
    expect((await app.call("POST", "/v1/voices", { key, body: { name: "X", colour: 1 } })).status).toBe(422);
  });
});

describe("voices: recognised in later recordings", () => {
  test("a sample from a recording span enrols a voice; a later two-voice recording labels that speaker with its name and score", async () => {
    const { app, key, seed, transcribe, prints } = await voicesApp();
    const voice = (await app.call("POST", "/v1/voices", { key, body: { name: "Dr. Weber" } })).body;
    const alone = await seed(talk([1, 1, 1], 0));
    const sample = await app.call("POST", `/v1/voices/${voice.id}/samples`, { key, body: { recording_id: alone, start_ms: 0, end_ms: 9000 } });
    expect(sample.status).toBe(201);
    expect(sample.body.sample_count).toBe(1);
    expect(prints(voice.id)).toBe(1);

    const later = await transcribe(await seed(talk([0, 1, 0, 1], 6)));
    expect(later.speakers).toEqual([
      { id: "SPEAKER_1", label: "Speaker 1" },
      { id: "SPEAKER_2", label: "Dr. Weber", voice_id: voice.id, score: expect.any(Number) },
    ]);
    expect(later.speakers[1].score).toBeGreaterThan(0.5);
    expect(new Set(later.segments.map((s: any) => s.speaker))).toEqual(new Set(["SPEAKER_1", "Dr. Weber"]));

    // Deleting the voice erases its prints; the next recording no longer knows it.
    await app.call("DELETE", `/v1/voices/${voice.id}`, { key });
    expect(prints(voice.id)).toBe(0);
    expect((await transcribe(await seed(talk([0, 1, 0, 1], 6)))).speakers.map((s: any) => s.label)).toEqual(["Speaker 1", "Speaker 2"]);
  });

  test("naming a speaker with remember creates the voice; the next recording recognises it, another voice stays SPEAKER_n", async () => {
    const { app, key, seed, transcribe } = await voicesApp();
    const first = await transcribe(await seed(talk([0, 1, 0, 1], 0)));
    const named = await app.call("PATCH", `/v1/transcriptions/${first.id}/speakers`, { key, body: { SPEAKER_1: { name: "Patient", remember: true } } });
    expect(named.status).toBe(200);
    const voices = (await app.call("GET", "/v1/voices", { key })).body.data;
    expect(voices).toEqual([expect.objectContaining({ name: "Patient", sample_count: 1, end_user_id: null })]);
    expect(named.body.speakers[0]).toEqual({ id: "SPEAKER_1", label: "Patient", voice_id: voices[0].id });

    // Voice 0 speaks second this time, other sentences: it is still the patient.
    const later = await transcribe(await seed(talk([1, 0, 1, 0], 6)));
    expect(later.speakers.map((s: any) => s.label)).toEqual(["Speaker 1", "Patient"]);
    // Remembering again extends the same voice.
    await app.call("PATCH", `/v1/transcriptions/${later.id}/speakers`, { key, body: { SPEAKER_2: { name: "Patient", remember: true } } });
    expect((await app.call("GET", `/v1/voices/${voices[0].id}`, { key })).body.sample_count).toBe(2);
  });

  test("sample errors: a span past the end, too little speech, an unknown recording", async () => {
    const { app, key, seed } = await voicesApp();
    const voice = (await app.call("POST", "/v1/voices", { key, body: { name: "V" } })).body;
    const rec = await seed(script([0]));
    const post = (body: object) => app.call("POST", `/v1/voices/${voice.id}/samples`, { key, body });
    expect((await post({ recording_id: rec, start_ms: 0, end_ms: 60_000 })).body.error.param).toBe("end_ms");
    expect((await post({ recording_id: rec, start_ms: 500, end_ms: 1000 })).body.error.param).toBe("end_ms");
    expect((await post({ recording_id: rec, start_ms: 2000, end_ms: 1000 })).status).toBe(422);
    const unknown = await post({ recording_id: "rec_nope", start_ms: 0, end_ms: 1000 });
    expect([unknown.status, unknown.body.error.param]).toEqual([404, "recording_id"]);
  });
});

describe("voices: erasure", () => {
  test("deleting the recording a sample came from erases that print; deleting an end user erases their voices", async () => {
    const { app, key, seed, prints } = await voicesApp();
    const user = (await app.call("POST", "/v1/end-users", { key, body: { name: "Ada" } })).body;
    const voice = (await app.call("POST", "/v1/voices", { key, body: { name: "Ada", end_user_id: user.id } })).body;
    const rec = await seed(talk([1, 1, 1], 0), user.id);
    await app.call("POST", `/v1/voices/${voice.id}/samples`, { key, body: { recording_id: rec, start_ms: 0, end_ms: 9000 } });
    expect(prints(voice.id)).toBe(1);
    expect((await app.call("DELETE", `/v1/recordings/${rec}`, { key })).status).toBe(204);
    expect(prints(voice.id)).toBe(0);
    expect((await app.call("DELETE", `/v1/end-users/${user.id}`, { key })).status).toBe(204);
    expect((await app.call("GET", `/v1/voices/${voice.id}`, { key })).status).toBe(404);
  });
});
