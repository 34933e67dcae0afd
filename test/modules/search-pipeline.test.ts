import { expect, test } from "bun:test";
import { HashingTestEmbedder } from "../../src/engines/embedder.test-double";
import { ScriptedLlm } from "../../src/engines/llm.test-double";
import { ScriptedTranscriber } from "../../src/engines/transcriber.test-double";
import { makeTenant, makeTestApp } from "../helpers";
import { voiced, wavFixture } from "./pipeline-fixtures";
import { uploadedRecording } from "./recordings-support";

// The whole path through the other modules' real code: upload -> verification -> auto
// transcription (contract 3) -> search.index_transcription (contract 4) -> search and Ask
// -> DELETE /recordings (chunks go with it). The transcriber, LLM and embedder are doubles (wording is
// asserted); voice-activity detection is the real Silero model.
test("an uploaded recording becomes searchable and askable, and stops being so when deleted", async () => {
  const transcriber = new ScriptedTranscriber({ segments: () => [{ start: 0, end: 3, text: " The quarterly budget review is on Friday.", confidence: 0.9 }] });
  const t = await makeTestApp({
    engines: { transcriber, llm: new ScriptedLlm(), embedder: new HashingTestEmbedder() },
    env: { PARLEY_ASK_PROVIDER: "extractive" },
  });
  const tenant = makeTenant(t.deps);
  const eu = (await t.call("POST", "/v1/end-users", { key: tenant.test, body: {} })).body.id;
  const { recording } = await uploadedRecording(t, tenant.test, wavFixture(voiced(3)), { end_user_id: eu, recorded_at: "2026-01-10T09:00:00Z" });
  await t.deps.queue.drain();

  const search = await t.call("POST", "/v1/recordings/search", { key: tenant.test, body: { query: "budget review", end_user_id: eu } });
  expect(search.status).toBe(200);
  expect(search.body.results).toHaveLength(1);
  expect(search.body.results[0]).toMatchObject({
    recording_id: recording.id,
    start_ms: 0,
    recorded_at: "2026-01-10T09:00:00.000Z",
    chunk_text: "The quarterly budget review is on Friday.",
  });

  const asked = await t.call("POST", "/v1/ask/sessions", {
    key: tenant.test,
    body: { scope: { type: "recording", recording_id: recording.id }, initial_message: { content: "When is the budget review?" } },
  });
  expect(asked.status).toBe(200);
  expect(asked.body.message.parts).toContainEqual(expect.objectContaining({ type: "citation", recording_id: recording.id, start_ms: 0 }));

  expect((await t.call("DELETE", `/v1/recordings/${recording.id}`, { key: tenant.test })).status).toBe(204);
  expect((await t.call("POST", "/v1/recordings/search", { key: tenant.test, body: { query: "budget review", end_user_id: eu } })).body.results).toEqual([]);
  expect(t.deps.db.query("SELECT COUNT(*) AS n FROM chunk_vectors").get()).toEqual({ n: 0 });
});
