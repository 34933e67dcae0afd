// "Reprocess all failed" (issue #31 item 12): recordings that failed for want of a model are
// transcribed once the model is there, by `parley recordings reprocess --failed` (another
// process, beside the server) through the server's own job queue, on the real pipeline.
import { describe, expect, test } from "bun:test";
import { copyFileSync, mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { ensureTestModels } from "../../scripts/test-models/cache";
import { systemClock } from "../../src/clock";
import { modelFilePath } from "../../src/model-files/manifest";
import { makeTenant, makeTestApp } from "../helpers";
import { parley } from "../support/server-process";
import { uploadedRecording } from "./recordings-support";

describe("parley recordings reprocess --failed", () => {
  test("a recording failed for want of the whisper model completes once it is installed and reprocessed", async () => {
    const models = ensureTestModels();
    // The default whisper model, by name (the tiny test model stands in for it once "installed").
    const t = await makeTestApp({ clock: systemClock, env: { PARLEY_LLM_MODEL: models.gguf } });
    const whisper = modelFilePath(t.deps.config.modelsDir, t.deps.config.models.whisper);
    const tenant = makeTenant(t.deps, "clinic");
    await t.call("PUT", "/v1/config/project", { key: tenant.test, body: { auto_summarize: false } });
    const { recording } = await uploadedRecording(t, tenant.test);
    await t.deps.queue.drain();
    const status = async () => (await t.call("GET", `/v1/recordings/${recording.id}`, { key: tenant.test })).body.status;
    // The transcription failed, the recording's audio is fine: it stays uploaded (decision 129).
    expect(await status()).toBe("uploaded");

    // As the server would be run: the CLI on its data dir, its models where the server looks.
    const env = { PARLEY_DATA_DIR: t.deps.config.dataDir, PARLEY_MODELS_DIR: t.deps.config.modelsDir, PARLEY_LOG_LEVEL: "silent" };
    expect((await parley(["recordings", "reprocess"], env)).code).toBe(2); // --failed is the selection; nothing else is implied

    mkdirSync(dirname(whisper), { recursive: true });
    copyFileSync(models.whisper, whisper); // the operator installs the model
    const run = await parley(["recordings", "reprocess", "--failed", "--json"], env);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    const started = JSON.parse(run.stdout);
    expect(started).toEqual([{ recording_id: recording.id, transcription_id: expect.stringMatching(/^txn_/), project_id: tenant.project.id, mode: "test" }]);

    // The CLI only queued the job; the server's queue runs it, as it runs normal processing.
    expect(await status()).toBe("processing");
    await t.deps.queue.drain();
    expect(await status()).toBe("completed");
    const transcriptions = (await t.call("GET", `/v1/transcriptions?recording_id=${recording.id}`, { key: tenant.test })).body.data;
    expect(transcriptions.map((x: { id: string; status: string }) => [x.id, x.status])).toEqual([
      [started[0].transcription_id, "completed"],
      [expect.stringMatching(/^txn_/), "failed"],
    ]);

    // Nothing failed is left: a second run starts nothing.
    const again = await parley(["recordings", "reprocess", "--failed"], env);
    expect(again.stdout).toContain("nothing to reprocess");
  }, 60_000);
});
