import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ensureTestModels } from "../../scripts/test-models/cache";
import { diagnose } from "../../src/cli/doctor";
import { loadConfig } from "../../src/config";
import { SingleSpeakerDiarizer } from "../../src/engines/diarizer";
import { ScriptedLlm } from "../../src/engines/llm.test-double";
import { RemoteTranscriber } from "../../src/engines/remote-transcriber";
import { WhisperTranscriber } from "../../src/engines/whisper-transcriber";
import { makeTempDir, makeTenant, makeTestApp } from "../helpers";
import { uploadedRecording } from "../modules/recordings-support";
import { wavFixture } from "../modules/pipeline-fixtures";
import { startOpenAiCompatibleDouble } from "../support/openai-compatible-server";
import { startWhisperServer, type WhisperServer } from "../support/whisper-server";
import { voicedBurst } from "./signals";

// whisper.cpp's own whisper-server, built from the sources the addon compiles, serving the tiny
// generated model: the real remote path (multipart WAV in, verbose_json out). Random weights
// give random words; the shapes of the answer are what is checked.
const models = ensureTestModels();
let whisper: WhisperServer;
beforeAll(async () => {
  whisper = await startWhisperServer(models.whisper);
}, 900_000); // a checkout built before whisper-server was added builds it once here
afterAll(() => whisper?.stop());

const policy = { concurrency: 2, retryDelaysMs: [10, 10] };

describe("RemoteTranscriber against whisper.cpp's whisper-server", () => {
  test("verbose_json gives segments in seconds within the audio, the language, and words with timings", async () => {
    const t = new RemoteTranscriber({ baseUrl: whisper.url, model: "tiny", timeoutMs: 120_000 }, policy);
    const result = await t.transcribe(voicedBurst(5, 0.5, 4.5), {});
    expect(result.language).toBe("en"); // an English-only model; the server says "english"
    expect(result.segments.length).toBeGreaterThan(0);
    let previous = 0;
    for (const s of result.segments) {
      expect(s.start).toBeGreaterThanOrEqual(previous);
      expect(s.end).toBeGreaterThanOrEqual(s.start);
      expect(s.end).toBeLessThanOrEqual(5);
      previous = s.start;
      expect(s.words?.length).toBeGreaterThan(0);
      for (const w of s.words!) {
        expect(w.text).not.toMatch(/^\s|\s$|\[_/);
        expect(w.end).toBeGreaterThanOrEqual(w.start);
        expect(w.end).toBeLessThanOrEqual(5);
        expect(w.confidence).toBeGreaterThanOrEqual(0);
        expect(w.confidence).toBeLessThanOrEqual(1);
      }
      // The segment's confidence is its words' mean, as the local build scores it.
      expect(s.confidence).toBeCloseTo(s.words!.reduce((sum, w) => sum + w.confidence!, 0) / s.words!.length, 5);
    }
  });

  test("told the local engine's decoding (no temperature fallback), whisper-server transcribes as the local addon does", async () => {
    // Random weights fail whisper.cpp's log-probability check on every window: with its fallback
    // on, the server samples hotter and writes other words; whisper-server's -nf does not turn it
    // off, only the request's temperature_inc does (decision 197).
    const pcm = voicedBurst(5, 0.5, 4.5);
    const local = new WhisperTranscriber({ model: "tiny", path: models.whisper, gpu: "off", threads: 2, decoding: { temperatureInc: 0 } });
    const remote = new RemoteTranscriber({ baseUrl: whisper.url, model: "tiny", timeoutMs: 120_000, temperatureInc: 0 }, policy);
    const texts = async (t: RemoteTranscriber | WhisperTranscriber) => (await t.transcribe(pcm, { language: "en" })).segments.map((s) => s.text);
    const expected = await texts(local);
    expect(expected.join("").trim()).not.toBe("");
    expect(await texts(remote)).toEqual(expected);
    expect(
      loadConfig({ PARLEY_TRANSCRIBER: "openai_compatible", PARLEY_TRANSCRIBER_BASE_URL: whisper.url, PARLEY_TRANSCRIBER_TEMPERATURE_INC: "0" }).engines
        .transcriber,
    ).toMatchObject({
      temperatureInc: 0,
    });
  });

  test("an upload is transcribed through the remote server by the app's own job", async () => {
    const t = await makeTestApp({
      engines: { llm: new ScriptedLlm(), diarizer: new SingleSpeakerDiarizer() },
      env: { PARLEY_TRANSCRIBER: "openai_compatible", PARLEY_TRANSCRIBER_BASE_URL: whisper.url, PARLEY_TRANSCRIBER_MODEL: "tiny-remote" },
    });
    const tenant = makeTenant(t.deps);
    const { recording } = await uploadedRecording(t, tenant.test, wavFixture(voicedBurst(4, 0.5, 3.5)));
    await t.deps.queue.drain();
    const [txn] = (await t.call("GET", `/v1/transcriptions?recording_id=${recording.id}`, { key: tenant.test })).body.data;
    expect(txn).toMatchObject({ status: "completed", model: "tiny-remote", language: "en" });
    expect(txn.segments.length).toBeGreaterThan(0);
    // whisper-server's word timings reach the stored transcript (decision 185).
    expect(txn.segments.some((s: { words?: unknown[] }) => s.words?.length)).toBe(true);
  });

  test("doctor transcribes a second of silence on it and reports the model and latency", async () => {
    const dir = makeTempDir();
    const config = loadConfig({
      PARLEY_DATA_DIR: dir,
      PARLEY_MODELS_DIR: `${dir}/models`,
      PARLEY_TRANSCRIBER: "openai_compatible",
      PARLEY_TRANSCRIBER_BASE_URL: whisper.url,
    });
    const check = (await diagnose(config)).find((c) => c.check === "transcriber");
    expect(check).toEqual({
      check: "transcriber",
      ok: true,
      detail: expect.stringMatching(/^whisper-1 at .*: answered in \d+ ms \(\d+ segment\(s\) for 1 s of silence, language en\)$/),
    });
  });
});

describe("a transcription server that fails", () => {
  const double = startOpenAiCompatibleDouble();
  afterAll(() => double.stop());

  async function transcribeWith(failures: typeof double.failures, env: Record<string, string> = {}) {
    double.failures = failures;
    double.failOn = "/v1/audio/transcriptions";
    const t = await makeTestApp({
      engines: { llm: new ScriptedLlm(), diarizer: new SingleSpeakerDiarizer() },
      env: { PARLEY_TRANSCRIBER: "openai_compatible", PARLEY_TRANSCRIBER_BASE_URL: double.url, PARLEY_REMOTE_RETRY_DELAYS_MS: "10,10", ...env },
    });
    const tenant = makeTenant(t.deps);
    const { recording } = await uploadedRecording(t, tenant.test, wavFixture(voicedBurst(3, 0.5, 2.5)));
    await t.deps.queue.drain();
    return (await t.call("GET", `/v1/transcriptions?recording_id=${recording.id}`, { key: tenant.test })).body.data[0];
  }

  test("500 on every attempt: the job retries, then fails as processing_error with the server's status", async () => {
    const txn = await transcribeWith([500, 500, 500]);
    expect(txn.status).toBe("failed");
    expect(txn.error.code).toBe("processing_error");
    expect(txn.error.message).toContain(`The transcription server at ${double.url} answered 500: failure 500 as the test asked (3 attempts)`);
  });

  test("a server that hangs is given up on at each attempt's timeout, then named", async () => {
    const txn = await transcribeWith(["hang", "hang", "hang"], { PARLEY_TRANSCRIBER_TIMEOUT_MS: "300" });
    expect(txn.status).toBe("failed");
    expect(txn.error.message).toContain("did not answer within 300 ms (3 attempts)");
  });
});
