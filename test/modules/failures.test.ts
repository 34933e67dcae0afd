import { describe, expect, test } from "bun:test";
import { ScriptedLlm } from "../../src/engines/llm.test-double";
import { WasmAudioDecoder } from "../../src/engines/wasm-audio";
import { ScriptedTranscriber, type TranscriberScript } from "../../src/engines/transcriber.test-double";
import { makeTenant, makeTestApp } from "../helpers";
import { concat, silence, voiced, wavFixture } from "./pipeline-fixtures";
import { createRecording, eventsOf, fixture, put, sha256, uploadedRecording } from "./recordings-support";

/** A failure is never silent (decision 086): each one ends failed, naming its cause and the command that fixes it. */
const speechFile = wavFixture(concat(voiced(2), silence(1), voiced(2)));

async function failingApp(options: Parameters<typeof makeTestApp>[0]) {
  const t = await makeTestApp(options);
  const tenant = makeTenant(t.deps);
  const get = async (path: string) => (await t.call("GET", path, { key: tenant.test })).body;
  return { t, key: tenant.test, get };
}

describe("a failure is never silent", () => {
  test("with no decoder, a hashed upload still completes (verified by size and SHA-256); the recording and its transcription fail naming the fix", async () => {
    const { t, key, get } = await failingApp({ engines: { transcriber: new ScriptedTranscriber() }, env: { PARLEY_FFMPEG_PATH: "/nonexistent/ffmpeg" } });
    const rec = await createRecording(t, key);
    const bytes = fixture(speechFile);
    await put(t, key, rec.id, bytes);
    const completion = { sha256: sha256(bytes), file_size_bytes: bytes.length };
    expect((await t.call("POST", `/v1/recordings/${rec.id}/upload-complete`, { key, body: completion })).status).toBe(425);
    await t.deps.queue.drain();
    const done = await t.call("POST", `/v1/recordings/${rec.id}/upload-complete`, { key, body: completion });
    expect(done.status).toBe(200);
    expect(eventsOf(t, "recording.uploaded").map((e) => e.id)).toEqual([rec.id]);
    const [txn] = (await get(`/v1/transcriptions?recording_id=${rec.id}`)).data;
    expect(txn).toMatchObject({ status: "failed", error: { code: "processing_error" } });
    for (const hint of ["/nonexistent/ffmpeg", "PARLEY_FFMPEG_PATH", "parley doctor"]) expect(txn.error.message).toContain(hint);
    expect(await get(`/v1/recordings/${rec.id}`)).toMatchObject({ status: "failed", format: null, error: txn.error });
  });

  test("a recording verified without a decoder gets its length and format at the first decode that succeeds", async () => {
    const { t, key, get } = await failingApp({ engines: { transcriber: new ScriptedTranscriber() }, env: { PARLEY_FFMPEG_PATH: "/nonexistent/ffmpeg" } });
    const { recording } = await uploadedRecording(t, key, speechFile);
    expect(await get(`/v1/recordings/${recording.id}`)).toMatchObject({ status: "failed", format: null, duration_seconds: null });
    t.deps.engines.audio = new WasmAudioDecoder(); // the operator fixed the decoder
    expect((await t.call("POST", "/v1/transcriptions", { key, body: { recording_id: recording.id } })).status).toBe(202);
    await t.deps.queue.drain();
    expect(await get(`/v1/recordings/${recording.id}`)).toMatchObject({ status: "completed", format: "wav", duration_seconds: 5, error: null });
  });

  test("a missing model fails the transcription and its recording with the command that installs it", async () => {
    const { t, key, get } = await failingApp({});
    const { recording } = await uploadedRecording(t, key, speechFile);
    const [txn] = (await get(`/v1/transcriptions?recording_id=${recording.id}`)).data;
    expect(txn).toMatchObject({ status: "failed", error: { code: "processing_error" } });
    expect(txn.error.message).toContain("models pull");
    expect(await get(`/v1/recordings/${recording.id}`)).toMatchObject({ status: "failed", error: txn.error });
  });

  test("an engine that crashes fails the transcription and its recording, pointing at parley doctor; a later success clears the recording's error", async () => {
    const script: TranscriberScript = { error: new Error("whisper aborted (core dumped)") };
    const { t, key, get } = await failingApp({ engines: { transcriber: new ScriptedTranscriber(script), llm: new ScriptedLlm() } });
    const { recording } = await uploadedRecording(t, key, speechFile);
    const failed = await get(`/v1/recordings/${recording.id}`);
    expect(failed).toMatchObject({ status: "failed", error: { code: "processing_error" } });
    expect(failed.error.message).toContain("whisper aborted (core dumped)");
    expect(failed.error.message).toContain("parley doctor");
    delete script.error; // the operator fixed the engine
    expect((await t.call("POST", "/v1/transcriptions", { key, body: { recording_id: recording.id } })).status).toBe(202);
    await t.deps.queue.drain();
    expect(await get(`/v1/recordings/${recording.id}`)).toMatchObject({ status: "completed", error: null });
  });
});
