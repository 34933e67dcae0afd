import { describe, expect, test } from "bun:test";
import { ensureTestModels } from "../../scripts/test-models/cache";
import { makeTenant, makeTestApp } from "../helpers";
import { eventsOf, seedRecording, voicedBurst, wav } from "./pipeline-fixtures";

const models = ensureTestModels();

/**
 * The whole pipeline on the real engines: ffmpeg, Silero VAD, whisper.cpp and llama.cpp,
 * with tiny random-weight models. Random weights give random words, so this asserts the
 * plumbing (statuses, shapes, times, events), never wording.
 */
describe("pipeline on the real engines with generated models", () => {
  test("an uploaded recording is transcribed and summarised end to end", async () => {
    const t = await makeTestApp({ env: { PARLEY_WHISPER_MODEL: models.whisper, PARLEY_LLM_MODEL: models.gguf } });
    const tenant = makeTenant(t.deps);
    const rec = await seedRecording(t.deps, { projectId: tenant.project.id, mode: "test" }, wav(voicedBurst(6, 0.5, 5.5)));
    const posted = await t.call("POST", "/v1/transcriptions", { key: tenant.test, body: { recording_id: rec, language: "en" } });
    expect(posted.status).toBe(202);
    await t.deps.queue.drain();
    const txn = (await t.call("GET", `/v1/transcriptions/${posted.body.id}`, { key: tenant.test })).body;
    expect(txn).toMatchObject({ status: "completed", language: "en", duration_seconds: 6, model: models.whisper, diarization: "classic", error: null });
    expect(txn.segments.length).toBeGreaterThan(0);
    for (const s of txn.segments) {
      expect(s.start).toBeGreaterThanOrEqual(0);
      expect(s.end).toBeGreaterThanOrEqual(s.start);
      expect(s.end).toBeLessThanOrEqual(6);
      expect(s.confidence).toBeGreaterThanOrEqual(0);
      expect(s.confidence).toBeLessThanOrEqual(1);
      expect(s.speaker).toMatch(/^SPEAKER_\d+$/);
    }
    const sum = (await t.call("GET", `/v1/summaries?transcription_id=${txn.id}`, { key: tenant.test })).body.data[0];
    // Summaries decode at temperature 0 and keep room for the schema's longest answer, so the
    // same recording gives the same, complete summary on every run.
    expect(sum).toMatchObject({ template: "general", status: "completed", model: models.gguf, error: null });
    expect(Object.keys(sum.structured).sort()).toEqual(["action_items", "decisions", "key_points", "summary", "title"]);
    expect(typeof sum.text).toBe("string");
    expect(eventsOf(t.deps, "summary.completed").map((e) => e.data.id)).toEqual([sum.id]);
  });

  test("the stored language is the one the model used: de asked of an English-only model is en", async () => {
    const t = await makeTestApp({ env: { PARLEY_WHISPER_MODEL: models.whisper } });
    const tenant = makeTenant(t.deps);
    await t.call("PUT", "/v1/config/project", { key: tenant.test, body: { auto_summarize: false } });
    const rec = await seedRecording(t.deps, { projectId: tenant.project.id, mode: "test" }, wav(voicedBurst(3, 0.5, 2.5)));
    const posted = await t.call("POST", "/v1/transcriptions", { key: tenant.test, body: { recording_id: rec, language: "de" } });
    expect(posted.body.language).toBe("de");
    await t.deps.queue.drain();
    const txn = (await t.call("GET", `/v1/transcriptions/${posted.body.id}`, { key: tenant.test })).body;
    expect(txn).toMatchObject({ status: "completed", language: "en" });
    expect(eventsOf(t.deps, "transcription.completed").find((e) => e.data.id === txn.id)!.data.language).toBe("en");
  });

  test("missing models fail the jobs with the command that installs them, never a crash", async () => {
    const t = await makeTestApp({ env: { PARLEY_WHISPER_MODEL: "whisper-base.en", PARLEY_LLM_MODEL: "qwen2.5-1.5b-instruct-q4" } });
    const tenant = makeTenant(t.deps);
    const rec = await seedRecording(t.deps, { projectId: tenant.project.id, mode: "test" }, wav(voicedBurst(3, 0.5, 2.5)));
    const posted = await t.call("POST", "/v1/transcriptions", { key: tenant.test, body: { recording_id: rec } });
    await t.deps.queue.drain();
    const txn = (await t.call("GET", `/v1/transcriptions/${posted.body.id}`, { key: tenant.test })).body;
    expect(txn.status).toBe("failed");
    expect(txn.error.code).toBe("processing_error");
    expect(txn.error.message).toContain("models pull whisper-base.en");

    // A transcription made with a working model, summarised on a server without the LLM.
    const good = await makeTestApp({ env: { PARLEY_WHISPER_MODEL: models.whisper, PARLEY_LLM_MODEL: "qwen2.5-1.5b-instruct-q4" } });
    const other = makeTenant(good.deps);
    const rec2 = await seedRecording(good.deps, { projectId: other.project.id, mode: "test" }, wav(voicedBurst(3, 0.5, 2.5)));
    const posted2 = await good.call("POST", "/v1/transcriptions", { key: other.test, body: { recording_id: rec2 } });
    await good.deps.queue.drain();
    // Only a completed transcription is summarised: say so if the generated model did not complete it.
    expect((await good.call("GET", `/v1/transcriptions/${posted2.body.id}`, { key: other.test })).body).toMatchObject({ status: "completed" });
    const sum = (await good.call("GET", "/v1/summaries", { key: other.test })).body.data[0];
    expect(sum.status).toBe("failed");
    expect(sum.error.code).toBe("processing_error");
    expect(sum.error.message).toContain("models pull qwen2.5-1.5b-instruct-q4");
  });
});
