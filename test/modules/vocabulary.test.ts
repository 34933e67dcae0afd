import { beforeAll, describe, expect, spyOn, test } from "bun:test";
import { ensureTestModels } from "../../scripts/test-models/cache";
import { WhisperTranscriber } from "../../src/engines/whisper-transcriber";
import { configCommand } from "../../src/modules/config/cli";
import { voicedBurst } from "../engines/signals";
import { makeTenant, makeTestApp } from "../helpers";
import { seedRecording, wav } from "./pipeline-fixtures";

const models = ensureTestModels();

let t: Awaited<ReturnType<typeof makeTestApp>>;
let tenant: ReturnType<typeof makeTenant>;

beforeAll(async () => {
  // The real engine, decoding greedily without whisper.cpp's hotter retries: random weights
  // fail its checks, and a retry samples, so the same audio would not decode the same twice.
  const transcriber = new WhisperTranscriber({ model: "tiny", path: models.whisper, gpu: "off", decoding: { temperatureInc: 0 } });
  t = await makeTestApp({ engines: { transcriber } });
  tenant = makeTenant(t.deps, "vocabulary-project");
});

const endUser = async () => (await t.call("POST", "/v1/end-users", { key: tenant.test, body: {} })).body.id as string;

describe("vocabulary: configuration like the other per-level settings", () => {
  test("each level adds its terms; the nearest level's come first, each term once", async () => {
    const put = await t.call("PUT", "/v1/config/project", { key: tenant.test, body: { vocabulary: ["Acme Holdings", "metformin"] } });
    expect(put.status).toBe(200);
    expect(put.body.overrides.vocabulary).toEqual(["Acme Holdings", "metformin"]);
    const id = await endUser();
    const mine = await t.call("PUT", `/v1/config/end-users/${id}`, { key: tenant.test, body: { vocabulary: [" Dr Quill ", "Metformin"] } });
    expect(mine.body.overrides.vocabulary).toEqual(["Dr Quill", "Metformin"]); // trimmed
    expect(mine.body.effective.vocabulary).toEqual(["Dr Quill", "Metformin", "Acme Holdings"]);
    // Another end user has the project's only.
    expect((await t.call("GET", `/v1/config/end-users/${await endUser()}`, { key: tenant.test })).body.effective.vocabulary).toEqual([
      "Acme Holdings",
      "metformin",
    ]);
    await t.call("DELETE", "/v1/config/project", { key: tenant.test });
    expect((await t.call("GET", `/v1/config/end-users/${id}`, { key: tenant.test })).body.effective.vocabulary).toEqual(["Dr Quill", "Metformin"]);
  });

  test.each([
    [[""], "empty term"],
    [["x".repeat(101)], "term over 100 characters"],
    [Array.from({ length: 201 }, (_, i) => `term${i}`), "over 200 terms"],
    ["metformin", "not a list"],
  ])("%j is 422 validation_error naming vocabulary (%s)", async (vocabulary) => {
    const r = await t.call("PUT", "/v1/config/project", { key: tenant.test, body: { vocabulary } });
    expect(r.status).toBe(422);
    expect(r.body.error.code).toBe("validation_error");
    expect(r.body.error.param).toStartWith("vocabulary");
  });

  test("parley config sets and unsets it", async () => {
    const log = spyOn(console, "log").mockImplementation(() => {});
    const level = ["--level", "project", "--project", "vocabulary-project", "--mode", "test"];
    try {
      configCommand(t.deps, ["set", ...level, 'vocabulary=["Zyanya Quispe","ibuprofen"]']);
      expect((await t.call("GET", "/v1/config/project", { key: tenant.test })).body.effective.vocabulary).toEqual(["Zyanya Quispe", "ibuprofen"]);
      expect(() => configCommand(t.deps, ["set", ...level, "vocabulary=[1]"])).toThrow("vocabulary");
      configCommand(t.deps, ["unset", ...level, "vocabulary"]);
      expect((await t.call("GET", "/v1/config/project", { key: tenant.test })).body.overrides.vocabulary).toBeNull();
    } finally {
      log.mockRestore();
    }
  });
});

describe("vocabulary: the end user's terms reach Whisper's decoder in the transcription job", () => {
  // Terms this generated model's vocabulary holds as tokens (see test/engines/whisper-prompt.test.ts).
  const TERMS = ["wabc", "wxyz", "wqrs"];

  async function transcribed(endUserId: string): Promise<string> {
    const rec = await seedRecording(t.deps, { projectId: tenant.project.id, mode: "test" }, wav(voicedBurst(4, 0.5, 3.5)), { endUserId });
    const posted = await t.call("POST", "/v1/transcriptions", { key: tenant.test, body: { recording_id: rec, language: "en" } });
    await t.deps.queue.drain();
    const txn = (await t.call("GET", `/v1/transcriptions/${posted.body.id}`, { key: tenant.test })).body;
    expect(txn.status).toBe("completed");
    return txn.text;
  }

  test("the same audio is decoded otherwise for the end user with a vocabulary, and the same for one without", async () => {
    await t.call("PUT", "/v1/config/project", { key: tenant.test, body: { auto_summarize: false } });
    const withTerms = await endUser();
    await t.call("PUT", `/v1/config/end-users/${withTerms}`, { key: tenant.test, body: { vocabulary: TERMS } });
    const without = await endUser();
    const plain = await transcribed(without);
    expect(await transcribed(without)).toBe(plain); // deterministic decoding: a difference is the prompt's
    expect(await transcribed(withTerms)).not.toBe(plain);
  }, 120_000);
});
