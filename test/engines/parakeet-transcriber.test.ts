import { describe, expect, test } from "bun:test";
import { ensureTestModels } from "../../scripts/test-models/cache";
import { ParakeetTranscriber } from "../../src/engines/parakeet-transcriber";
import { makeTenant, makeTestApp } from "../helpers";
import { seedRecording, voicedBurst, wav } from "../modules/pipeline-fixtures";

const models = ensureTestModels();

/**
 * Parakeet on the real addon (native/whisper/parakeet.c) with the tiny random-weight
 * stand-in: random weights give random words, so this asserts the plumbing (words with
 * times inside the audio, segments made of them, the model that ran), never wording.
 */
describe("Parakeet transcribes on Parley's addon", () => {
  test("the engine gives segments made of timed words", async () => {
    const parakeet = new ParakeetTranscriber({ model: "tiny-parakeet", path: models.parakeet, threads: 1 });
    const pcm = voicedBurst(4, 0.5, 3.5);
    const result = await parakeet.transcribe(pcm, { language: "de" });
    expect(result).toMatchObject({ language: "de", model: "tiny-parakeet" });
    expect(result.segments.length).toBeGreaterThan(0);
    for (const s of result.segments) {
      expect(s.words!.length).toBeGreaterThan(0);
      expect(s.text).toBe(s.words!.map((w) => w.text).join(" "));
      expect(s.start).toBe(s.words![0]!.start);
      expect(s.end).toBe(s.words!.at(-1)!.end);
      for (const w of s.words!) {
        expect(w.start).toBeGreaterThanOrEqual(0);
        expect(w.end).toBeGreaterThanOrEqual(w.start);
        expect(w.end).toBeLessThanOrEqual(4);
        expect(w.confidence).toBeGreaterThan(0);
        expect(w.confidence).toBeLessThanOrEqual(1);
      }
    }
    // No language asked: Parakeet recognises it without naming it.
    expect((await parakeet.transcribe(pcm, {})).language).toBe("und");
  });

  test("a stopped transcription rejects with the abort's reason", async () => {
    const parakeet = new ParakeetTranscriber({ model: "tiny-parakeet", path: models.parakeet, threads: 1 });
    const controller = new AbortController();
    const running = parakeet.transcribe(voicedBurst(20, 0, 20), { signal: controller.signal });
    controller.abort(new Error("time limit"));
    await expect(running).rejects.toThrow("time limit");
  });

  test("an upload is transcribed through the app by the model's family, with word times, named on the transcription", async () => {
    // An operator's own file: its header says it is Parakeet's.
    const t = await makeTestApp({ env: { PARLEY_WHISPER_MODEL: models.parakeet } });
    const tenant = makeTenant(t.deps);
    await t.call("PUT", "/v1/config/project", { key: tenant.test, body: { auto_summarize: false } });
    const rec = await seedRecording(t.deps, { projectId: tenant.project.id, mode: "test" }, wav(voicedBurst(6, 0.5, 5.5)));
    const posted = await t.call("POST", "/v1/transcriptions", { key: tenant.test, body: { recording_id: rec, language: "en" } });
    expect(posted.status).toBe(202);
    await t.deps.queue.drain();
    const txn = (await t.call("GET", `/v1/transcriptions/${posted.body.id}`, { key: tenant.test })).body;
    expect(txn).toMatchObject({ status: "completed", language: "en", model: models.parakeet, error: null });
    expect(txn.segments.length).toBeGreaterThan(0);
    for (const s of txn.segments) {
      expect(s.end).toBeLessThanOrEqual(6);
      // Word times from Parakeet's token durations, mapped back to the recording with their segment.
      expect(s.words.length).toBeGreaterThan(0);
      for (const w of s.words) {
        expect(w.start).toBeGreaterThanOrEqual(s.start);
        expect(w.end).toBeLessThanOrEqual(s.end);
      }
    }
  });

  test("a language Parakeet does not cover goes to the installed whisper fallback, and the transcription says so", async () => {
    const t = await makeTestApp({ env: { PARLEY_WHISPER_MODEL: models.parakeet, PARLEY_PARAKEET_FALLBACK_MODEL: models.whisperMultilingual } });
    const tenant = makeTenant(t.deps);
    await t.call("PUT", "/v1/config/project", { key: tenant.test, body: { auto_summarize: false } });
    const rec = await seedRecording(t.deps, { projectId: tenant.project.id, mode: "test" }, wav(voicedBurst(3, 0.5, 2.5)));
    const posted = await t.call("POST", "/v1/transcriptions", { key: tenant.test, body: { recording_id: rec, language: "ja" } });
    await t.deps.queue.drain();
    const txn = (await t.call("GET", `/v1/transcriptions/${posted.body.id}`, { key: tenant.test })).body;
    expect(txn).toMatchObject({ status: "completed", language: "ja", model: models.whisperMultilingual });
  });

  test("without the fallback installed, such a recording fails with what to install", async () => {
    const t = await makeTestApp({ env: { PARLEY_WHISPER_MODEL: models.parakeet } });
    const tenant = makeTenant(t.deps);
    const rec = await seedRecording(t.deps, { projectId: tenant.project.id, mode: "test" }, wav(voicedBurst(3, 0.5, 2.5)));
    const posted = await t.call("POST", "/v1/transcriptions", { key: tenant.test, body: { recording_id: rec, language: "ja" } });
    await t.deps.queue.drain();
    const txn = (await t.call("GET", `/v1/transcriptions/${posted.body.id}`, { key: tenant.test })).body;
    expect(txn.status).toBe("failed");
    expect(txn.error.code).toBe("processing_error");
    expect(txn.error.message).toContain("not one Parakeet covers");
    expect(txn.error.message).toContain("models pull whisper-base");
  });
});
