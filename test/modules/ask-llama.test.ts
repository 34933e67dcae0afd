import { expect, test } from "bun:test";
import { ensureTestModels } from "../../scripts/test-models/cache";
import { HashingTestEmbedder } from "../../src/engines/embedder.test-double";
import { LlamaLlm } from "../../src/engines/llama-llm";
import { makeTenant, makeTestApp } from "../helpers";
import { BUDGET, DOCTOR, type Line, seedTranscript } from "./search-corpus";

// The default provider on the real node-llama-cpp engine with a tiny generated GGUF
// (random weights: the answer is noise, so this checks plumbing, not wording).
test("llama_cpp answers through the embedded engine; a transcript beyond its window is 413", async () => {
  const llm = new LlamaLlm({ model: "tiny-gguf", path: ensureTestModels().gguf, gpu: "off" });
  const t = await makeTestApp({ engines: { llm, embedder: new HashingTestEmbedder() } });
  const tenant = makeTenant(t.deps);
  const eu = (await t.call("POST", "/v1/end-users", { key: tenant.test, body: {} })).body.id;
  const scope = { projectId: tenant.project.id, mode: "test" as const };
  seedTranscript(t.deps, scope, { endUserId: eu, recordedAt: null, lines: BUDGET });
  seedTranscript(t.deps, scope, { endUserId: eu, recordedAt: null, lines: DOCTOR });
  const long: Line[] = Array.from({ length: 120 }, (_, i) => [i * 10, i * 10 + 10, "SPEAKER_1", `Part ${i} of a very long meeting about logistics.`]);
  const longRec = seedTranscript(t.deps, scope, { endUserId: eu, recordedAt: null, lines: long }).recordingId;
  await t.deps.queue.drain();

  const r = await t.call("POST", "/v1/ask/sessions", {
    key: tenant.test,
    body: { scope: { type: "library" }, end_user_id: eu, initial_message: { content: "What is the marketing budget?" } },
  });
  expect(r.status).toBe(200);
  expect(r.body.message).toMatchObject({ role: "assistant", provider: "llama_cpp", model: "tiny-gguf" });
  expect(r.body.message.tokens.input).toBeGreaterThan(0);
  expect(["stop", "length"]).toContain(r.body.message.finish_reason);
  const given = new Set(r.body.sources.map((s: any) => `${s.recording_id}@${s.start_ms}`));
  for (const c of r.body.message.parts.filter((p: any) => p.type === "citation")) expect(given.has(`${c.recording_id}@${c.start_ms}`)).toBe(true);

  const tooLong = await t.call("POST", "/v1/ask/sessions", {
    key: tenant.test,
    body: { scope: { type: "recording", recording_id: longRec }, initial_message: { content: "Summarise." } },
  });
  expect(tooLong.status).toBe(413);
  expect(tooLong.body.error.code).toBe("transcript_too_large");
}, 120_000);
