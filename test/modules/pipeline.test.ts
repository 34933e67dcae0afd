import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { SingleSpeakerDiarizer } from "../../src/engines/diarizer";
import { ScriptedLlm } from "../../src/engines/llm.test-double";
import { ScriptedTranscriber } from "../../src/engines/transcriber.test-double";
import { organizationOf, saveOrganizationOverrides } from "../../src/modules/config/store";
import { AUTO_TRANSCRIBE_JOB } from "../../src/modules/transcriptions/job";
import { RUN_TRANSCRIPTION_JOB } from "../../src/modules/transcriptions/service";
import { makeTempDir, makeTenant, makeTestApp } from "../helpers";
import { concat, eventsOf, seedRecording, silence, voiced, wav, wavFixture } from "./pipeline-fixtures";
import { uploadedRecording } from "./recordings-support";

/** Real decoding and Silero VAD; test doubles for the models too big for CI (transcriber, LLM). */
async function pipelineApp() {
  // Synthetic tones are no voices: the classic diarizer hears several "speakers" in them (decision 097).
  const engines = { transcriber: new ScriptedTranscriber(), llm: new ScriptedLlm(), diarizer: new SingleSpeakerDiarizer() };
  const t = await makeTestApp({ engines });
  const tenant = makeTenant(t.deps);
  const scope = { projectId: tenant.project.id, mode: "test" as const };
  const transcriptionsOf = async (rec: string) => (await t.call("GET", `/v1/transcriptions?recording_id=${rec}`, { key: tenant.test })).body.data;
  return { t, tenant, scope, transcriptionsOf };
}

const pcm = concat(voiced(2), silence(1), voiced(2));
const speech = wav(pcm);
const speechFile = wavFixture(pcm);

describe("pipeline: upload to summary", () => {
  test("a verified upload is transcribed and summarised without any call", async () => {
    const { t, tenant, transcriptionsOf } = await pipelineApp();
    const { recording } = await uploadedRecording(t, tenant.test, speechFile);
    const [txn] = await transcriptionsOf(recording.id);
    expect(txn).toMatchObject({ status: "completed", recording_id: recording.id, segments: [{ speaker: "SPEAKER_1", text: "utterance 1" }] });
    expect(eventsOf(t.deps, "transcription.started").map((e) => e.data.id)).toEqual([txn.id]);
    const sums = (await t.call("GET", `/v1/summaries?transcription_id=${txn.id}`, { key: tenant.test })).body.data;
    expect(sums.map((x: any) => [x.template, x.status])).toEqual([["general", "completed"]]);
    expect((await t.call("GET", `/v1/recordings/${recording.id}`, { key: tenant.test })).body.status).toBe("completed");
  });

  test("an upload that probing flagged as not audio fails as audio_format_unsupported", async () => {
    const { t, tenant, transcriptionsOf } = await pipelineApp();
    const { recording } = await uploadedRecording(t, tenant.test, "not-audio.txt");
    const [txn] = await transcriptionsOf(recording.id);
    expect(txn).toMatchObject({ status: "failed", error: { code: "audio_format_unsupported" } });
    expect(eventsOf(t.deps, "transcription.failed").map((e) => e.data.id)).toEqual([txn.id]);
  });

  test("a decoder killed from outside (a service manager stopping everything) leaves the transcription processing, to be retried", async () => {
    const dir = makeTempDir();
    const ffmpeg = join(dir, "ffmpeg");
    writeFileSync(ffmpeg, "#!/bin/sh\nkill -TERM $$\n", { mode: 0o700 });
    const t = await makeTestApp({ engines: { transcriber: new ScriptedTranscriber() }, env: { PARLEY_FFMPEG_PATH: ffmpeg } });
    const tenant = makeTenant(t.deps);
    const rec = await seedRecording(t.deps, { projectId: tenant.project.id, mode: "test" }, speech);
    const posted = await t.call("POST", "/v1/transcriptions", { key: tenant.test, body: { recording_id: rec } });
    await t.deps.queue.drain();
    expect((await t.call("GET", `/v1/transcriptions/${posted.body.id}`, { key: tenant.test })).body).toMatchObject({ status: "processing", error: null });
    const job = t.deps.db.query("SELECT state, last_error FROM jobs WHERE type = ?").get(RUN_TRANSCRIPTION_JOB);
    expect(job).toEqual({ state: "queued", last_error: "ffmpeg was stopped by SIGTERM" });
  });

  test("deleting the recording deletes its transcriptions and summaries", async () => {
    const { t, tenant, transcriptionsOf } = await pipelineApp();
    const { recording } = await uploadedRecording(t, tenant.test, speechFile);
    const [txn] = await transcriptionsOf(recording.id);
    const sum = (await t.call("GET", `/v1/summaries?transcription_id=${txn.id}`, { key: tenant.test })).body.data[0];
    expect((await t.call("DELETE", `/v1/recordings/${recording.id}`, { key: tenant.test })).status).toBe(204);
    expect((await t.call("GET", `/v1/transcriptions/${txn.id}`, { key: tenant.test })).status).toBe(404);
    expect((await t.call("GET", `/v1/summaries/${sum.id}`, { key: tenant.test })).status).toBe(404);
  });
});

describe("pipeline: the configuration hierarchy decides auto-processing", () => {
  test("organization, project, end user and device levels each switch auto_transcribe; the nearest wins", async () => {
    const { t, tenant, scope, transcriptionsOf } = await pipelineApp();
    const eu = (await t.call("POST", "/v1/end-users", { key: tenant.test, body: {} })).body.id;
    const dev = (await t.call("POST", "/v1/devices", { key: tenant.test, body: { serial_number: "SN-CFG-1", model: "parley_pin" } })).body.id;
    expect((await t.call("POST", `/v1/devices/${dev}/bind`, { key: tenant.test, body: { end_user_id: eu } })).status).toBe(200);
    const org = (value: boolean) =>
      saveOrganizationOverrides(t.deps.db, organizationOf(t.deps.db, scope), { auto_transcribe: value }, t.clock.now().toISOString());
    const put = (path: string, body: object) => t.call("PUT", `/v1/config/${path}`, { key: tenant.test, body });
    /** What upload completion does: enqueue transcriptions.auto; then whether a transcription started. */
    const autoStarts = async () => {
      const rec = await seedRecording(t.deps, scope, speech, { endUserId: eu, deviceId: dev });
      t.deps.queue.enqueue(AUTO_TRANSCRIBE_JOB, { project_id: scope.projectId, mode: "test", recording_id: rec });
      await t.deps.queue.drain();
      return (await transcriptionsOf(rec)).length === 1;
    };

    expect(await autoStarts()).toBe(true); // default on
    org(false);
    expect(await autoStarts()).toBe(false);
    await put("project", { auto_transcribe: true });
    expect(await autoStarts()).toBe(true);
    await put("project", { auto_transcribe: false });
    expect(await autoStarts()).toBe(false);
    await put(`end-users/${eu}`, { auto_transcribe: true });
    expect(await autoStarts()).toBe(true);
    await put(`devices/${dev}`, { auto_transcribe: false });
    expect(await autoStarts()).toBe(false);
    await put(`devices/${dev}`, { auto_transcribe: true, language: "fr" });
    expect(await autoStarts()).toBe(true);
    const rec = await seedRecording(t.deps, scope, speech, { endUserId: eu, deviceId: dev });
    t.deps.queue.enqueue(AUTO_TRANSCRIBE_JOB, { project_id: scope.projectId, mode: "test", recording_id: rec });
    await t.deps.queue.drain();
    const [fr] = await transcriptionsOf(rec);
    expect(fr).toMatchObject({ status: "completed", language: "fr" });
    const summariesOf = async (txn: string) => (await t.call("GET", `/v1/summaries?transcription_id=${txn}`, { key: tenant.test })).body.total;
    expect(await summariesOf(fr.id)).toBe(1);

    // auto_summarize follows the same hierarchy, decided for the recording's device and end user.
    await put(`end-users/${eu}`, { auto_transcribe: true, auto_summarize: false });
    const quiet = await seedRecording(t.deps, scope, speech, { endUserId: eu, deviceId: dev });
    t.deps.queue.enqueue(AUTO_TRANSCRIBE_JOB, { project_id: scope.projectId, mode: "test", recording_id: quiet });
    await t.deps.queue.drain();
    expect(await summariesOf((await transcriptionsOf(quiet))[0].id)).toBe(0);
    await put(`devices/${dev}`, { auto_transcribe: true, auto_summarize: true });
    const loud = await seedRecording(t.deps, scope, speech, { endUserId: eu, deviceId: dev });
    t.deps.queue.enqueue(AUTO_TRANSCRIBE_JOB, { project_id: scope.projectId, mode: "test", recording_id: loud });
    await t.deps.queue.drain();
    expect(await summariesOf((await transcriptionsOf(loud))[0].id)).toBe(1);
  });

  test("the auto job is idempotent and never adds to a transcription the caller started", async () => {
    const { t, tenant, scope, transcriptionsOf } = await pipelineApp();
    const rec = await seedRecording(t.deps, scope, speech);
    const job = { project_id: scope.projectId, mode: "test" as const, recording_id: rec };
    t.deps.queue.enqueue(AUTO_TRANSCRIBE_JOB, job);
    await t.deps.queue.drain();
    t.deps.queue.enqueue(AUTO_TRANSCRIBE_JOB, job);
    await t.deps.queue.drain();
    expect(await transcriptionsOf(rec)).toHaveLength(1);

    const manual = await seedRecording(t.deps, scope, speech);
    await t.call("POST", "/v1/transcriptions", { key: tenant.test, body: { recording_id: manual } });
    t.deps.queue.enqueue(AUTO_TRANSCRIBE_JOB, { ...job, recording_id: manual });
    await t.deps.queue.drain();
    expect(await transcriptionsOf(manual)).toHaveLength(1);
  });
});

describe("pipeline: crash recovery", () => {
  test("a transcription job leased by a worker that died is picked up after its lease expires", async () => {
    const { t, tenant, scope } = await pipelineApp();
    const rec = await seedRecording(t.deps, scope, speech);
    const txn = (await t.call("POST", "/v1/transcriptions", { key: tenant.test, body: { recording_id: rec } })).body;
    // Another process leased the job, then died mid-run: its lease is what is left.
    const leaseUntil = new Date(t.clock.now().getTime() + 60_000).toISOString();
    t.deps.db
      .query("UPDATE jobs SET state = 'running', attempts = 1, leased_by = 'wrk_dead', lease_until = ? WHERE type = ?")
      .run(leaseUntil, RUN_TRANSCRIPTION_JOB);
    expect(await t.deps.queue.drain()).toBe(0);
    expect((await t.call("GET", `/v1/transcriptions/${txn.id}`, { key: tenant.test })).body.status).toBe("processing");
    t.clock.advance(61_000);
    await t.deps.queue.drain();
    expect((await t.call("GET", `/v1/transcriptions/${txn.id}`, { key: tenant.test })).body.status).toBe("completed");
    expect(eventsOf(t.deps, "transcription.completed").filter((e) => e.data.id === txn.id)).toHaveLength(1);
  });

  test("a job whose every attempt died mid-run fails the transcription on its last attempt", async () => {
    const { t, tenant, scope } = await pipelineApp();
    const rec = await seedRecording(t.deps, scope, speech);
    const txn = (await t.call("POST", "/v1/transcriptions", { key: tenant.test, body: { recording_id: rec } })).body;
    const leaseUntil = new Date(t.clock.now().getTime() + 60_000).toISOString();
    t.deps.db
      .query("UPDATE jobs SET state = 'running', attempts = max_attempts - 1, leased_by = 'wrk_dead', lease_until = ? WHERE type = ?")
      .run(leaseUntil, RUN_TRANSCRIPTION_JOB);
    t.clock.advance(61_000);
    await t.deps.queue.drain();
    const failed = (await t.call("GET", `/v1/transcriptions/${txn.id}`, { key: tenant.test })).body;
    expect(failed.status).toBe("failed");
    expect(failed.error.code).toBe("processing_error");
    expect(failed.error.message).toContain("interrupted 4 times");
    expect(eventsOf(t.deps, "transcription.failed").map((e) => e.data.id)).toEqual([txn.id]);
  });

  test("a job that runs again after it finished changes nothing and records no second event", async () => {
    const { t, tenant, scope } = await pipelineApp();
    const rec = await seedRecording(t.deps, scope, speech);
    const txn = (await t.call("POST", "/v1/transcriptions", { key: tenant.test, body: { recording_id: rec } })).body;
    await t.deps.queue.drain();
    const before = (await t.call("GET", `/v1/transcriptions/${txn.id}`, { key: tenant.test })).body;
    t.deps.queue.enqueue(RUN_TRANSCRIPTION_JOB, { project_id: scope.projectId, mode: "test", transcription_id: txn.id });
    await t.deps.queue.drain();
    expect((await t.call("GET", `/v1/transcriptions/${txn.id}`, { key: tenant.test })).body).toEqual(before);
    expect(eventsOf(t.deps, "transcription.completed").filter((e) => e.data.id === txn.id)).toHaveLength(1);
    expect(eventsOf(t.deps, "summary.started")).toHaveLength(1);
  });

  test("summaries.auto starts the configured summary once; a template stored before templates were checked falls back to general", async () => {
    const { t, tenant, scope } = await pipelineApp();
    // Written past the API's 422, as a row from before the configuration checked template names.
    saveOrganizationOverrides(t.deps.db, organizationOf(t.deps.db, scope), { summary_template: "minutes" as never }, t.clock.now().toISOString());
    const rec = await seedRecording(t.deps, scope, speech);
    const txn = (await t.call("POST", "/v1/transcriptions", { key: tenant.test, body: { recording_id: rec } })).body;
    await t.deps.queue.drain();
    const job = t.deps.db.query<{ payload: string }, []>("SELECT payload FROM jobs WHERE type = 'summaries.auto'").all();
    expect(job.map((j) => JSON.parse(j.payload))).toEqual([{ project_id: scope.projectId, mode: "test", transcription_id: txn.id, template: "minutes" }]);
    t.deps.queue.enqueue("summaries.auto", { project_id: scope.projectId, mode: "test", transcription_id: txn.id, template: "minutes" });
    await t.deps.queue.drain();
    const sums = (await t.call("GET", `/v1/summaries?transcription_id=${txn.id}`, { key: tenant.test })).body.data;
    expect(sums.map((x: any) => [x.template, x.status])).toEqual([["general", "completed"]]);
    expect(eventsOf(t.deps, "summary.started")).toHaveLength(1);
  });
});
