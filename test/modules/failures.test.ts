import { describe, expect, test } from "bun:test";
import { ScriptedLlm } from "../../src/engines/llm.test-double";
import { WasmAudioDecoder } from "../../src/engines/wasm-audio";
import { ScriptedTranscriber, type TranscriberScript } from "../../src/engines/transcriber.test-double";
import { makeTenant, makeTestApp } from "../helpers";
import { concat, silence, voiced, wavFixture } from "./pipeline-fixtures";
import { createRecording, eventsOf, fixture, put, sha256, uploadedRecording } from "./recordings-support";

/**
 * A failure is never silent (decision 086): each one ends failed, naming its cause and the
 * command that fixes it. The appliance's failures (no decoder, no model, a crash) are the
 * transcription's: the audio is safe and the recording stays uploaded (decision 129).
 */
const speechFile = wavFixture(concat(voiced(2), silence(1), voiced(2)));

async function failingApp(options: Parameters<typeof makeTestApp>[0]) {
  const t = await makeTestApp(options);
  const tenant = makeTenant(t.deps);
  const get = async (path: string) => (await t.call("GET", path, { key: tenant.test })).body;
  return { t, key: tenant.test, get };
}

describe("a failure is never silent", () => {
  test("with no decoder, a hashed upload still completes (verified by size and SHA-256); the transcription fails naming the fix, the recording stays uploaded", async () => {
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
    // The recording's error is verification's: its audio could not be examined.
    expect(await get(`/v1/recordings/${rec.id}`)).toMatchObject({ status: "uploaded", format: null, error: { code: "processing_error" } });
  });

  test("a recording verified without a decoder gets its length and format at the first decode that succeeds", async () => {
    const { t, key, get } = await failingApp({ engines: { transcriber: new ScriptedTranscriber() }, env: { PARLEY_FFMPEG_PATH: "/nonexistent/ffmpeg" } });
    const { recording } = await uploadedRecording(t, key, speechFile);
    expect(await get(`/v1/recordings/${recording.id}`)).toMatchObject({ status: "uploaded", format: null, duration_seconds: null });
    t.deps.engines.audio = new WasmAudioDecoder(); // the operator fixed the decoder
    expect((await t.call("POST", "/v1/transcriptions", { key, body: { recording_id: recording.id } })).status).toBe(202);
    await t.deps.queue.drain();
    expect(await get(`/v1/recordings/${recording.id}`)).toMatchObject({ status: "completed", format: "wav", duration_seconds: 5, error: null });
  });

  test("no whisper model installed: upload-complete answers uploaded and the recording stays so; the transcription fails with the command that installs it", async () => {
    const { t, key, get } = await failingApp({});
    // The retry of upload-complete comes after the queue ran verification and the transcription that failed.
    const { recording } = await uploadedRecording(t, key, speechFile);
    expect(recording).toMatchObject({ status: "uploaded", error: null });
    const [txn] = (await get(`/v1/transcriptions?recording_id=${recording.id}`)).data;
    expect(txn).toMatchObject({ status: "failed", error: { code: "processing_error" } });
    expect(txn.error.message).toContain("models pull");
    expect(await get(`/v1/recordings/${recording.id}`)).toMatchObject({ status: "uploaded", error: null });
  });

  test("an engine that crashes fails the transcription, pointing at parley doctor, and leaves the recording uploaded; a later success completes it", async () => {
    const script: TranscriberScript = { error: new Error("whisper aborted (core dumped)") };
    const { t, key, get } = await failingApp({ engines: { transcriber: new ScriptedTranscriber(script), llm: new ScriptedLlm() } });
    const { recording } = await uploadedRecording(t, key, speechFile);
    const [txn] = (await get(`/v1/transcriptions?recording_id=${recording.id}`)).data;
    expect(txn).toMatchObject({ status: "failed", error: { code: "processing_error" } });
    expect(txn.error.message).toContain("whisper aborted (core dumped)");
    expect(txn.error.message).toContain("parley doctor");
    expect(await get(`/v1/recordings/${recording.id}`)).toMatchObject({ status: "uploaded", error: null });
    delete script.error; // the operator fixed the engine
    expect((await t.call("POST", "/v1/transcriptions", { key, body: { recording_id: recording.id } })).status).toBe(202);
    await t.deps.queue.drain();
    expect(await get(`/v1/recordings/${recording.id}`)).toMatchObject({ status: "completed", error: null });
    // A reprocessing that fails for the appliance leaves the transcript that stands: the recording stays completed.
    script.error = new Error("whisper aborted again");
    expect((await t.call("POST", "/v1/transcriptions", { key, body: { recording_id: recording.id } })).status).toBe(202);
    await t.deps.queue.drain();
    expect(await get(`/v1/recordings/${recording.id}`)).toMatchObject({ status: "completed", error: null });
  });
});
