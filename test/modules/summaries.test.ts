import { beforeAll, describe, expect, test } from "bun:test";
import { SingleSpeakerDiarizer } from "../../src/engines/diarizer";
import { ScriptedLlm, type LlmScript } from "../../src/engines/llm.test-double";
import { ScriptedTranscriber, type TranscriberScript } from "../../src/engines/transcriber.test-double";
import { IDENTIFIERS_SCHEMA } from "../../src/modules/redaction/llm-pass";
import { citedSchema } from "../../src/modules/summaries/citations";
import { longestAnswer } from "../../src/modules/summaries/generate";
import { TEMPLATES } from "../../src/modules/summaries/templates";
import { makeTenant, makeTestApp, waitFor } from "../helpers";
import { concat, eventsOf, seedRecording, silence, voiced, wav } from "./pipeline-fixtures";

const RECORD_FIELDS = [
  "completed_at",
  "created_at",
  "error",
  "failed_at",
  "format",
  "id",
  "model",
  "prompt_version",
  "recording_id",
  "sections",
  "started_at",
  "status",
  "structured",
  "template",
  "text",
  "transcription_id",
];

/** An app on real decoding and Silero VAD with scripted test-double models (transcripts and summaries quote their input), one project; `transcribed()` gives a completed transcription of a fresh recording. */
async function summaryApp(llmScript: LlmScript = {}, transcriberScript: TranscriberScript = {}, env: Record<string, string> = {}) {
  const llm = new ScriptedLlm(llmScript);
  // Synthetic tones are no voices: the classic diarizer hears several "speakers" in them (decision 097).
  const engines = { transcriber: new ScriptedTranscriber(transcriberScript), llm, diarizer: new SingleSpeakerDiarizer() };
  const app = await makeTestApp({ engines, env });
  const tenant = makeTenant(app.deps);
  const scope = { projectId: tenant.project.id, mode: "test" as const };
  const audio = wav(concat(voiced(2), silence(1), voiced(2)));
  async function transcribed(options: { autoSummarize?: boolean } = {}) {
    if (options.autoSummarize === false) await app.call("PUT", "/v1/config/project", { key: tenant.test, body: { auto_summarize: false } });
    const rec = await seedRecording(app.deps, scope, audio);
    const txn = (await app.call("POST", "/v1/transcriptions", { key: tenant.test, body: { recording_id: rec } })).body;
    await app.deps.queue.drain();
    return { rec, txn: (await app.call("GET", `/v1/transcriptions/${txn.id}`, { key: tenant.test })).body };
  }
  async function summarize(transcriptionId: string, template?: string) {
    const r = await app.call("POST", "/v1/summaries", { key: tenant.test, body: { transcription_id: transcriptionId, template } });
    expect(r.status).toBe(202);
    await app.deps.queue.drain();
    return (await app.call("GET", `/v1/summaries/${r.body.id}`, { key: tenant.test })).body;
  }
  return { app, llm, tenant, scope, transcribed, summarize };
}

let s: Awaited<ReturnType<typeof summaryApp>>;
beforeAll(async () => {
  s = await summaryApp();
});

describe("summaries: happy path", () => {
  test("a completed transcription is summarised automatically with the general template", async () => {
    const { txn } = await s.transcribed();
    expect(txn.status).toBe("completed");
    const list = (await s.app.call("GET", `/v1/summaries?transcription_id=${txn.id}`, { key: s.tenant.test })).body;
    expect(list.total).toBe(1);
    const sum = list.data[0];
    expect(Object.keys(sum).sort()).toEqual(RECORD_FIELDS);
    expect(sum).toMatchObject({
      transcription_id: txn.id,
      recording_id: txn.recording_id,
      status: "completed",
      template: "general",
      format: "summary",
      prompt_version: "general.v3",
      model: "test-scripted-llm",
      error: null,
    });
    expect(Object.keys(sum.structured).sort()).toEqual(["action_items", "decisions", "key_points", "summary", "title"]);
    // Rendered from the structured output; the model was given the transcript lines.
    expect(sum.text).toStartWith("# about: [1] [0:00] SPEAKER_1: utterance 1");
    expect(sum.text).toContain("## Key points\n- about:");
    const started = eventsOf(s.app.deps, "summary.started").find((e) => e.data.id === sum.id)!;
    expect(Object.keys(started.data).sort()).toEqual(["created_at", "id", "recording_id", "started_at", "status", "template", "transcription_id"]);
    const completed = eventsOf(s.app.deps, "summary.completed").find((e) => e.data.id === sum.id)!;
    expect(Object.keys(completed.data).sort()).toEqual(["completed_at", "created_at", "id", "recording_id", "status", "template", "text", "transcription_id"]);
    expect(completed.data.text).toBe(sum.text);
  });

  test("POST /summaries with the clinical template gives a medical_note", async () => {
    const { txn } = await s.transcribed({ autoSummarize: false });
    const r = await s.app.call("POST", "/v1/summaries", { key: s.tenant.test, body: { transcription_id: txn.id, template: "clinical" } });
    expect(r.status).toBe(202);
    expect(r.body).toMatchObject({
      status: "processing",
      template: "clinical",
      format: "medical_note",
      text: null,
      structured: null,
      sections: null,
      prompt_version: "clinical.v3",
    });
    await s.app.deps.queue.drain();
    const done = (await s.app.call("GET", `/v1/summaries/${r.body.id}`, { key: s.tenant.test })).body;
    expect(done.status).toBe("completed");
    expect(Object.keys(done.structured).sort()).toEqual(["assessment", "chief_complaint", "objective", "plan", "subjective"]);
    expect(done.text).toContain("## Chief complaint\n");
    expect(done.text).toContain("## Plan\n- ");
  });

  test.each(["sales", "legal"])("the %s template completes with its own sections", async (template) => {
    const { txn } = await s.transcribed({ autoSummarize: false });
    const done = await s.summarize(txn.id, template);
    expect(done).toMatchObject({ status: "completed", template, format: "summary", prompt_version: `${template}.v3` });
  });

  test("a new request for the same template re-runs it under the same id and replaces the result", async () => {
    const { txn } = await s.transcribed({ autoSummarize: false });
    const first = await s.summarize(txn.id, "sales");
    s.app.clock.advance(1000);
    // Two requests before the jobs run: only the newest run may write a result.
    const again = await s.app.call("POST", "/v1/summaries", { key: s.tenant.test, body: { transcription_id: txn.id, template: "sales" } });
    const third = await s.app.call("POST", "/v1/summaries", { key: s.tenant.test, body: { transcription_id: txn.id, template: "sales" } });
    expect(again.body).toMatchObject({ id: first.id, status: "processing", text: null, completed_at: null });
    expect(again.body.started_at > first.started_at).toBe(true);
    expect(third.body.id).toBe(first.id);
    await s.app.deps.queue.drain();
    const done = (await s.app.call("GET", `/v1/summaries/${first.id}`, { key: s.tenant.test })).body;
    expect(done.status).toBe("completed");
    expect(eventsOf(s.app.deps, "summary.started").filter((e) => e.data.id === first.id)).toHaveLength(3);
    expect(eventsOf(s.app.deps, "summary.completed").filter((e) => e.data.id === first.id)).toHaveLength(2);
    const list = (await s.app.call("GET", `/v1/summaries?transcription_id=${txn.id}`, { key: s.tenant.test })).body;
    expect(list.data.map((x: any) => x.id)).toEqual([first.id]);
  });

  test("Idempotency-Key replays the first answer without a re-run", async () => {
    const { txn } = await s.transcribed({ autoSummarize: false });
    const headers = { "idempotency-key": `sum-${txn.id}` };
    const body = { transcription_id: txn.id, template: "general" };
    const a = await s.app.call("POST", "/v1/summaries", { key: s.tenant.test, headers, body });
    const b = await s.app.call("POST", "/v1/summaries", { key: s.tenant.test, headers, body });
    expect(b.status).toBe(202);
    expect(b.body).toEqual(a.body);
    expect(b.headers.get("idempotent-replayed")).toBe("true");
    expect(eventsOf(s.app.deps, "summary.started").filter((e) => e.data.id === a.body.id)).toHaveLength(1);
    await s.app.deps.queue.drain();
  });

  test("the auto-summary uses the configured template, and auto_summarize false starts none", async () => {
    await s.app.call("PUT", "/v1/config/project", { key: s.tenant.test, body: { auto_summarize: true, summary_template: "legal" } });
    const { txn } = await s.transcribed();
    const list = (await s.app.call("GET", `/v1/summaries?transcription_id=${txn.id}`, { key: s.tenant.test })).body;
    expect(list.data.map((x: any) => x.template)).toEqual(["legal"]);
    const off = await s.transcribed({ autoSummarize: false });
    expect((await s.app.call("GET", `/v1/summaries?transcription_id=${off.txn.id}`, { key: s.tenant.test })).body.total).toBe(0);
    await s.app.call("DELETE", "/v1/config/project", { key: s.tenant.test });
  });
});

describe("summaries: long transcripts and model output", () => {
  test("a transcript over the context is summarised map-reduce", async () => {
    const sentence = (n: number) => Array.from({ length: 30 }, (_, i) => `w${n}_${i}`).join(" ");
    const many = await summaryApp(
      { contextTokens: 800 },
      { segments: () => Array.from({ length: 40 }, (_, i) => ({ start: i * 0.1, end: i * 0.1 + 0.1, text: sentence(i), confidence: 0.8 })) },
    );
    const { txn } = await many.transcribed();
    const sum = (await many.app.call("GET", `/v1/summaries?transcription_id=${txn.id}`, { key: many.tenant.test })).body.data[0];
    expect(sum.status).toBe("completed");
    const summaryRequests = many.llm.requests.filter((r) => r.jsonSchema !== IDENTIFIERS_SCHEMA); // not redaction's pass
    const maps = summaryRequests.filter((r) => !r.jsonSchema);
    const reduce = summaryRequests.filter((r) => r.jsonSchema);
    expect(maps.length).toBeGreaterThan(1);
    expect(reduce).toHaveLength(1);
    // Every part of the transcript reached a map call, and the final call saw only notes.
    const mapped = maps.map((r) => r.messages.at(-1)!.content).join("\n");
    for (const i of [0, 20, 39]) expect(mapped).toContain(`w${i}_0`);
    expect(reduce[0]!.messages.at(-1)!.content).toStartWith("notes:");
    for (const r of many.llm.requests) expect(r.messages.map((m) => m.content.split(/\s+/).length).reduce((a, b) => a + b)).toBeLessThanOrEqual(800);
  });

  test("a transcript filling the context still leaves room for the template's longest answer", async () => {
    // 45 lines of 32 words: one call's worth if only a quarter of the 2400-word context were
    // kept for the answer, which would then be cut off at about 750 words (not JSON).
    const sentence = (n: number) => Array.from({ length: 30 }, (_, i) => `w${n}_${i}`).join(" ");
    const segments = () => Array.from({ length: 45 }, (_, i) => ({ start: i * 0.1, end: i * 0.1 + 0.1, text: sentence(i), confidence: 0.8 }));
    const longest = JSON.stringify(longestAnswer(citedSchema(TEMPLATES.general.schema, 45)));
    expect(longest.split(/\s+/).length).toBeGreaterThan(800);
    const full = await summaryApp({ contextTokens: 2400, answer: (text, req) => (req.jsonSchema ? longest : text) }, { segments });
    const { txn } = await full.transcribed();
    const sum = (await full.app.call("GET", `/v1/summaries?transcription_id=${txn.id}`, { key: full.tenant.test })).body.data[0];
    expect(sum).toMatchObject({ status: "completed", error: null });
    const answer = JSON.parse(longest);
    expect(sum.structured.title).toBe(answer.title.trim());
    expect(sum.structured.key_points).toEqual(answer.key_points.map(([text]: [string]) => text));
    expect(sum.sections.flatMap((section: any) => section.items)).toHaveLength(answer.summary.length + 3 * answer.key_points.length);
  });

  test("every template's schema bounds its strings and arrays, so its longest answer is known", () => {
    const unbounded = (schema: any, path: string): string[] => {
      if (schema.properties) return Object.entries(schema.properties).flatMap(([k, v]) => unbounded(v, `${path}.${k}`));
      if (schema.type === "array") return [...(schema.maxItems ? [] : [path]), ...unbounded(schema.items, `${path}[]`)];
      return schema.type === "string" && !schema.maxLength ? [path] : [];
    };
    for (const template of Object.values(TEMPLATES)) {
      expect([template.name, unbounded(template.schema, "")]).toEqual([template.name, []]);
      expect([template.name, unbounded(citedSchema(template.schema, 12), "")]).toEqual([template.name, []]);
    }
  });

  test("reasoning before the answer is stripped", async () => {
    const thinking = await summaryApp({ answer: (text, req) => (req.jsonSchema ? `<think>secret chain of thought</think>\n${text}` : text) });
    const { txn } = await thinking.transcribed();
    const sum = (await thinking.app.call("GET", `/v1/summaries?transcription_id=${txn.id}`, { key: thinking.tenant.test })).body.data[0];
    expect(sum.status).toBe("completed");
    expect(sum.text).not.toContain("secret");
  });
});

describe("summaries: failures", () => {
  async function failed(llmScript: LlmScript, env: Record<string, string> = {}) {
    const app = await summaryApp(llmScript, {}, env);
    const { txn } = await app.transcribed();
    const sum = (await app.app.call("GET", `/v1/summaries?transcription_id=${txn.id}`, { key: app.tenant.test })).body.data[0];
    expect(sum.status).toBe("failed");
    expect(sum.failed_at).not.toBeNull();
    const event = eventsOf(app.app.deps, "summary.failed").find((e) => e.data.id === sum.id)!;
    expect(Object.keys(event.data).sort()).toEqual(["error", "failed_at", "id", "recording_id", "status", "transcription_id"]);
    expect(event.data.error).toEqual(sum.error);
    return sum.error;
  }

  test("an engine error or an answer that is not JSON is processing_error", async () => {
    expect(await failed({ error: new Error("llama exploded") })).toEqual({
      code: "processing_error",
      message: "Summary failed: llama exploded. Check the engines with: parley doctor.",
    });
    expect((await failed({ answer: () => "I cannot do JSON today" })).code).toBe("processing_error");
  });

  test("a refusal is content_policy_violation", async () => {
    expect((await failed({ finishReason: "content_filter" })).code).toBe("content_policy_violation");
  });

  test("a model that never answers is stopped by the time limit: timeout", async () => {
    // The limit also bounds the transcription before it (real ffmpeg): long enough for that on a busy machine.
    expect((await failed({ hang: true }, { PARLEY_PROCESSING_MIN_SECONDS: "3", PARLEY_PROCESSING_TIME_FACTOR: "0" })).code).toBe("timeout");
  });

  test("a summary running when the server stops is put back in the queue, not failed", async () => {
    // Redaction's model pass off: it would hang too, before the summary is asked for.
    const t = await summaryApp({ hang: true }, {}, { PARLEY_REDACTION_LLM: "off" });
    const { txn } = await t.transcribed({ autoSummarize: false });
    const posted = await t.app.call("POST", "/v1/summaries", { key: t.tenant.test, body: { transcription_id: txn.id } });
    t.app.deps.queue.start();
    await waitFor("the model called", () => t.llm.requests.length > 0);
    await t.app.deps.queue.stop(5_000);
    expect((await t.app.call("GET", `/v1/summaries/${posted.body.id}`, { key: t.tenant.test })).body).toMatchObject({ status: "processing", error: null });
    expect(t.app.deps.db.query("SELECT state, attempts FROM jobs WHERE type = 'summaries.run'").get()).toEqual({ state: "queued", attempts: 0 });
    expect(eventsOf(t.app.deps, "summary.failed")).toEqual([]);
  });
});

describe("summaries: errors", () => {
  test("unknown transcription is 404 resource_not_found; unknown summary 404 not_found", async () => {
    const r = await s.app.call("POST", "/v1/summaries", { key: s.tenant.test, body: { transcription_id: "txn_nope" } });
    expect(r.status).toBe(404);
    expect(r.body.error).toMatchObject({ code: "resource_not_found", param: "transcription_id" });
    expect((await s.app.call("GET", "/v1/summaries/sum_nope", { key: s.tenant.test })).body.error.code).toBe("not_found");
  });

  test("a transcription that is not completed is 409 transcription_not_ready", async () => {
    const rec = await seedRecording(s.app.deps, s.scope, wav(voiced(2)));
    const txn = (await s.app.call("POST", "/v1/transcriptions", { key: s.tenant.test, body: { recording_id: rec } })).body;
    const r = await s.app.call("POST", "/v1/summaries", { key: s.tenant.test, body: { transcription_id: txn.id } });
    expect(r.status).toBe(409);
    expect(r.body.error).toMatchObject({ code: "transcription_not_ready", param: "transcription_id" });
    await s.app.deps.queue.drain();
  });

  test.each(["poetry", "meeting", "General"])("configuring summary_template %s is 422 naming summary_template", async (summary_template) => {
    const r = await s.app.call("PUT", "/v1/config/project", { key: s.tenant.test, body: { summary_template } });
    expect(r.status).toBe(422);
    expect(r.body.error).toMatchObject({ code: "validation_error", param: "summary_template" });
    expect((await s.app.call("GET", "/v1/config/project", { key: s.tenant.test })).body.effective.summary_template).toBe("general");
  });

  test("an unknown field is 422 naming it, not silently ignored", async () => {
    const r = await s.app.call("POST", "/v1/summaries", { key: s.tenant.test, body: { transcription_id: "txn_x", templte: "legal" } });
    expect(r.status).toBe(422);
    expect(r.body.error.code).toBe("validation_error");
    expect(r.body.error.message).toContain("Unknown field templte");
  });

  test("an unknown template is 422 naming template", async () => {
    const r = await s.app.call("POST", "/v1/summaries", { key: s.tenant.test, body: { transcription_id: "txn_x", template: "poetry" } });
    expect(r.status).toBe(422);
    expect(r.body.error).toMatchObject({ code: "validation_error", param: "template" });
  });
});
