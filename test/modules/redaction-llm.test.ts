import { describe, expect, test } from "bun:test";
import { ensureTestModels } from "../../scripts/test-models/cache";
import { LlamaLlm } from "../../src/engines/llama-llm";
import { type LlmScript, ScriptedLlm } from "../../src/engines/llm.test-double";
import { ScriptedTranscriber } from "../../src/engines/transcriber.test-double";
import { IDENTIFIERS_SCHEMA } from "../../src/modules/redaction/llm-pass";
import { llmPassOf } from "../../src/modules/redaction/service";
import { makeTenant, makeTestApp } from "../helpers";
import { concat, eventsOf, seedRecording, silence, voiced, wav } from "./pipeline-fixtures";

// "Zyanya Quispe" has no title, no introduction and is in no dictionary: the rules keep it.
const SPOKEN = [" Zyanya Quispe called about the results, her number is (555) 867-5309.", " The pain started two weeks ago and the dose stays the same."];
const UNKNOWN_NAME = "Zyanya Quispe";

/** The redaction pass's answers: what a model that reads well would list, and what a model might make up. */
const listing =
  (identifiers: { kind: string; text: string }[]): LlmScript["answer"] =>
  (text, request) =>
    request.jsonSchema === IDENTIFIERS_SCHEMA ? JSON.stringify({ identifiers }) : text;

async function passApp(llm: ScriptedLlm | LlamaLlm | null, config: Record<string, unknown> = {}) {
  const half = (pcm: Float32Array) => pcm.length / 32_000;
  const transcriber = new ScriptedTranscriber({
    segments: (pcm) => SPOKEN.map((text, i) => ({ start: i * half(pcm), end: (i + 1) * half(pcm), text, confidence: 0.9 })),
  });
  // Without llm, the default engine: LlamaLlm on a model file that is not installed.
  const app = await makeTestApp({ engines: llm ? { transcriber, llm } : { transcriber } });
  const tenant = makeTenant(app.deps);
  await app.call("PUT", "/v1/config/project", { key: tenant.test, body: { max_speakers: 1, ...config } });
  const scope = { projectId: tenant.project.id, mode: "test" as const };
  const rec = await seedRecording(app.deps, scope, wav(concat(voiced(2), silence(1), voiced(2))));
  const id = (await app.call("POST", "/v1/transcriptions", { key: tenant.test, body: { recording_id: rec } })).body.id as string;
  await app.deps.queue.drain();
  const get = async (path: string) => (await app.call("GET", path, { key: tenant.test })).body;
  /** The Parley-Redaction header of a read. */
  const passes = async (path: string) => (await app.call("GET", path, { key: tenant.test })).headers.get("parley-redaction");
  const event = (type: string, field: string) => eventsOf(app.deps, type).find((e) => e.data[field] === id);
  return { app, scope, id, get, passes, event, key: tenant.test };
}

describe("redaction's model pass (LLM test double)", () => {
  test("a name no rule knows is redacted after the job, in the transcript, its summary and the redacted webhook payloads", async () => {
    const llm = new ScriptedLlm({ answer: listing([{ kind: "name", text: UNKNOWN_NAME }]) });
    const t = await passApp(llm, { redact_webhook_payloads: true });
    expect(llm.requests.some((r) => r.jsonSchema === IDENTIFIERS_SCHEMA)).toBe(true);
    expect(llmPassOf(t.app.deps.db, t.scope, t.id)).toMatchObject({
      status: "completed",
      model: "test-scripted-llm",
      identifiers: [{ kind: "name", text: UNKNOWN_NAME }],
    });

    const plain = await t.get(`/v1/transcriptions/${t.id}`);
    expect(plain.text).toContain(UNKNOWN_NAME);
    const redacted = await t.get(`/v1/transcriptions/${t.id}?redacted=true`);
    expect(JSON.stringify(redacted)).not.toContain("Zyanya");
    expect(redacted.text).toContain("[NAME] called about the results, her number is [PHONE].");
    expect(redacted.segments[0].text).toContain("[NAME] called");

    // The scripted summary quotes the transcript's start, name included.
    const summaryId = (await t.get(`/v1/summaries?transcription_id=${t.id}`)).data[0].id;
    expect(JSON.stringify(await t.get(`/v1/summaries/${summaryId}`))).toContain("Zyanya");
    expect(JSON.stringify(await t.get(`/v1/summaries/${summaryId}?redacted=true`))).not.toContain("Zyanya");
    // Each redacted view says the model checked it too; the original says nothing of redaction.
    expect(await t.passes(`/v1/transcriptions/${t.id}?redacted=true`)).toBe("rules; model=completed");
    expect(await t.passes(`/v1/summaries/${summaryId}?redacted=true`)).toBe("rules; model=completed");
    expect(await t.passes(`/v1/transcriptions/${t.id}`)).toBeNull();

    // The events waited for the pass: redacted with what it found, once each.
    expect(eventsOf(t.app.deps, "transcription.completed").filter((e) => e.data.id === t.id)).toHaveLength(1);
    expect(t.event("transcription.completed", "id")!.data.text).toContain("[NAME] called");
    expect(JSON.stringify(t.event("summary.completed", "transcription_id")!.data)).not.toContain("Zyanya");
  });

  test("what the pass found is content: deleting the recording deletes it", async () => {
    const t = await passApp(new ScriptedLlm({ answer: listing([{ kind: "name", text: UNKNOWN_NAME }]) }), { auto_summarize: false });
    expect(llmPassOf(t.app.deps.db, t.scope, t.id)!.identifiers).toHaveLength(1);
    const recordingId = (await t.get(`/v1/transcriptions/${t.id}`)).recording_id;
    expect((await t.app.call("DELETE", `/v1/recordings/${recordingId}`, { key: t.key })).status).toBe(204);
    expect(t.app.deps.db.query("SELECT count(*) AS n FROM redaction_passes").get()).toEqual({ n: 0 });
  });

  test("strings the model invents, sentences and common words are ignored; the rules still redact", async () => {
    const llm = new ScriptedLlm({
      answer: listing([
        { kind: "name", text: "Bartholomew Fairweather" }, // not in the text
        { kind: "name", text: "the" }, // would blank the text
        { kind: "address", text: "The pain started two weeks ago and the dose stays the same." }, // a whole sentence
        { kind: "record_number", text: "weeks ago" }, // no capital, no digit
        { kind: "ssn", text: "Quispe" }, // a kind redaction does not know
      ]),
    });
    const t = await passApp(llm, { auto_summarize: false });
    expect(llmPassOf(t.app.deps.db, t.scope, t.id)).toMatchObject({ status: "completed", identifiers: [] });
    const redacted = await t.get(`/v1/transcriptions/${t.id}?redacted=true`);
    expect(redacted.text).toContain("The pain started two weeks ago and the dose stays the same.");
    expect(redacted.text).toContain("her number is [PHONE]");
    expect(redacted.text).not.toContain("Bartholomew");
  });

  test("a model that fails leaves the rules alone redacting, and the held-back event is still sent", async () => {
    const t = await passApp(new ScriptedLlm({ answer: listing([]), error: new Error("out of memory") }), {
      redact_webhook_payloads: true,
      auto_summarize: false,
    });
    expect(llmPassOf(t.app.deps.db, t.scope, t.id)).toMatchObject({ status: "failed", identifiers: [], error: "out of memory" });
    expect(t.event("transcription.completed", "id")!.data.text).toContain("her number is [PHONE]");
    expect(await t.passes(`/v1/transcriptions/${t.id}?redacted=true`)).toBe("rules; model=failed");
  });
});

test("with no LLM installed nothing changes: no pass, the event at completion, rules redact", async () => {
  const t = await passApp(null, { redact_webhook_payloads: true, auto_summarize: false });
  expect(t.app.deps.db.query("SELECT count(*) AS n FROM jobs WHERE type = 'transcriptions.redaction_pass'").get()).toEqual({ n: 0 });
  expect(llmPassOf(t.app.deps.db, t.scope, t.id)).toBeNull();
  expect(t.event("transcription.completed", "id")!.data.text).toContain(`${UNKNOWN_NAME} called about the results, her number is [PHONE].`);
  expect(await t.passes(`/v1/transcriptions/${t.id}?redacted=true`)).toBe("rules; model=not_run");
});

// The real node-llama-cpp engine on the tiny generated GGUF (random weights: what it lists is
// noise, so this checks the plumbing: the job runs, its result is stored, and nothing it made
// up is kept).
test("the pass runs end to end on the real LlamaLlm; the transcript still redacts by rules", async () => {
  const llm = new LlamaLlm({ model: "tiny-gguf", path: ensureTestModels().gguf, gpu: "off" });
  const t = await passApp(llm, { redact_webhook_payloads: true, auto_summarize: false });
  const pass = llmPassOf(t.app.deps.db, t.scope, t.id)!;
  // Its answer runs to maxTokens (random weights): the complete items before the cut are read.
  expect(pass).toMatchObject({ model: "tiny-gguf", status: "completed", error: null });
  const text = (await t.get(`/v1/transcriptions/${t.id}`)).text as string;
  for (const found of pass.identifiers) expect(text).toContain(found.text);
  const redacted = await t.get(`/v1/transcriptions/${t.id}?redacted=true`);
  expect(redacted.text).toContain("her number is [PHONE]");
  expect(t.event("transcription.completed", "id")!.data.text).toContain("her number is [PHONE]");
}, 180_000);
