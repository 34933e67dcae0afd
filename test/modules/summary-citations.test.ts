import { describe, expect, test } from "bun:test";
import { ensureTestModels } from "../../scripts/test-models/cache";
import { SingleSpeakerDiarizer } from "../../src/engines/diarizer";
import { LlamaLlm } from "../../src/engines/llama-llm";
import type { Llm } from "../../src/engines/llm";
import { type LlmScript, ScriptedLlm } from "../../src/engines/llm.test-double";
import { ScriptedTranscriber } from "../../src/engines/transcriber.test-double";
import { IDENTIFIERS_SCHEMA } from "../../src/modules/redaction/llm-pass";
import { citedSchema, readCitedAnswer } from "../../src/modules/summaries/citations";
import { makeTenant, makeTestApp } from "../helpers";
import { concat, seedRecording, silence, voiced, wav } from "./pipeline-fixtures";

/** Three segments of a 6 s recording, 2 s each; the second says a phone number (for redaction). */
const SPOKEN = [" The pain started on Monday.", " Call me on (555) 867-5309 about it.", " We will try ibuprofen for a week."];

type Citation = { recording_id: string; start_ms: number; end_ms: number };
type Item = { text: string; supported: boolean; citations: Citation[] };
type Section = { key: string; title: string; list: boolean; items: Item[] };

/** An app whose transcriptions are SPOKEN, summarised by `llm`; `summary(template)` gives a completed summary of a fresh recording and its transcription. */
async function citationApp(llm: Llm) {
  const transcriber = new ScriptedTranscriber({
    segments: (pcm) => SPOKEN.map((text, i) => ({ start: (i * pcm.length) / 48_000, end: ((i + 1) * pcm.length) / 48_000, text, confidence: 0.9 })),
  });
  const app = await makeTestApp({ engines: { transcriber, llm, diarizer: new SingleSpeakerDiarizer() } });
  const tenant = makeTenant(app.deps);
  const scope = { projectId: tenant.project.id, mode: "test" as const };
  await app.call("PUT", "/v1/config/project", { key: tenant.test, body: { auto_summarize: false } });
  const get = async (path: string) => (await app.call("GET", path, { key: tenant.test })).body;
  async function summary(template = "general") {
    const rec = await seedRecording(app.deps, scope, wav(concat(voiced(2), silence(2), voiced(2))));
    const txn = (await app.call("POST", "/v1/transcriptions", { key: tenant.test, body: { recording_id: rec } })).body;
    await app.deps.queue.drain();
    const created = await app.call("POST", "/v1/summaries", { key: tenant.test, body: { transcription_id: txn.id, template } });
    await app.deps.queue.drain();
    return { rec, txn: await get(`/v1/transcriptions/${txn.id}`), summary: await get(`/v1/summaries/${created.body.id}`) };
  }
  return { app, get, summary, key: tenant.test };
}

const items = (sections: Section[]) => sections.flatMap((s) => s.items);

/** Every citation is one of the transcription's segments, to the millisecond, on its recording. */
function expectResolved(sections: Section[], txn: { recording_id: string; segments: { start: number; end: number }[] }) {
  const moments = txn.segments.map((s) =>
    JSON.stringify({ recording_id: txn.recording_id, start_ms: Math.round(s.start * 1000), end_ms: Math.round(s.end * 1000) }),
  );
  for (const item of items(sections)) {
    expect(item.supported).toBe(item.citations.length > 0);
    for (const c of item.citations) expect(moments).toContain(JSON.stringify(c));
  }
}

/** The scripted model's summary answers replaced by `answer` (redaction's own pass left alone). */
const answering = (answer: unknown): LlmScript => ({
  answer: (text, request) => (request.jsonSchema && request.jsonSchema !== IDENTIFIERS_SCHEMA ? JSON.stringify(answer) : text),
});

describe("summaries show their evidence", () => {
  test("every statement cites the segments it rests on; the citations resolve to the transcription's segments", async () => {
    const c = await citationApp(new ScriptedLlm());
    const { txn, summary } = await c.summary("general");
    expect(summary.status).toBe("completed");
    expect(summary.sections.map((s: Section) => [s.key, s.title, s.list])).toEqual([
      ["summary", "Summary", false],
      ["key_points", "Key points", true],
      ["decisions", "Decisions", true],
      ["action_items", "Action items", true],
    ]);
    // The scripted model names the first number the grammar allows: segment 1.
    const first = txn.segments[0];
    for (const item of items(summary.sections)) {
      expect(item).toMatchObject({ supported: true });
      expect(item.citations).toEqual([{ recording_id: txn.recording_id, start_ms: Math.round(first.start * 1000), end_ms: Math.round(first.end * 1000) }]);
    }
    expectResolved(summary.sections, txn);
  });

  test("the grammar lets the model name only the transcript's segment numbers, which number its lines", async () => {
    const llm = new ScriptedLlm();
    const c = await citationApp(llm);
    await c.summary("clinical");
    const request = llm.requests.findLast((r) => r.jsonSchema && r.jsonSchema !== IDENTIFIERS_SCHEMA)!;
    const schema = request.jsonSchema as any;
    // Each statement is one array, the sentence then its numbers (decision 232).
    expect(schema.properties.subjective.items).toMatchObject({
      type: "array",
      prefixItems: [{ type: "string" }],
      items: { enum: [1, 2, 3] },
      minItems: 1,
      maxItems: 5,
    });
    expect(schema.properties.plan.items.items).toEqual({ enum: [1, 2, 3] });
    const lines = request.messages.at(-1)!.content.split("\n");
    expect(lines.map((l) => l.slice(0, 4))).toEqual(["[1] ", "[2] ", "[3] "]);
  });

  test("numbers that are no segment are dropped; a statement left without one is supported: false", async () => {
    const answer = {
      title: "Pain",
      summary: [
        ["The pain began on Monday.", 1, 99],
        ["It is broken.", 0, -1, 4, 2.5, "2"],
      ],
      // An object per statement, as the v2 prompts asked: what a provider ignoring the schema may still write.
      key_points: [{ text: "Ibuprofen for a week.", segments: [3, 3] }],
      decisions: [["Nothing cited."]],
      action_items: ["bare text, as a model ignoring the schema writes it"],
    };
    const c = await citationApp(new ScriptedLlm(answering(answer)));
    const { txn, summary } = await c.summary("general");
    expect(summary.status).toBe("completed");
    const all = items(summary.sections);
    expect(all.map((i: Item) => [i.text, i.supported, i.citations.length])).toEqual([
      ["The pain began on Monday.", true, 1],
      ["It is broken.", false, 0],
      ["Ibuprofen for a week.", true, 1],
      ["Nothing cited.", false, 0],
      ["bare text, as a model ignoring the schema writes it", false, 0],
    ]);
    expect(all[2]!.citations[0]!.start_ms).toBe(Math.round(txn.segments[2].start * 1000));
    expectResolved(summary.sections, txn);
    // The template's own shape and the text rendering read as before: the sentences of a prose field joined.
    expect(summary.structured.summary).toBe("The pain began on Monday. It is broken.");
    expect(summary.text).toContain("## Summary\nThe pain began on Monday. It is broken.");
  });

  test("a redacted read redacts the statements and keeps their citations", async () => {
    const answer = { title: "Call", summary: [["Call (555) 867-5309 back.", 2]], key_points: [], decisions: [], action_items: [] };
    const c = await citationApp(new ScriptedLlm(answering(answer)));
    const { summary } = await c.summary("general");
    const redacted = await c.get(`/v1/summaries/${summary.id}?redacted=true`);
    expect(redacted.sections[0].items[0].text).toBe("Call [PHONE] back.");
    expect(redacted.sections[0].items[0].citations).toEqual(summary.sections[0].items[0].citations);
  });

  test("a summary being made has no sections, and a re-run clears the earlier ones", async () => {
    const c = await citationApp(new ScriptedLlm());
    const { summary } = await c.summary("legal");
    expect(summary.sections.length).toBeGreaterThan(0);
    const again = await c.app.call("POST", "/v1/summaries", { key: c.key, body: { transcription_id: summary.transcription_id, template: "legal" } });
    expect(again.body).toMatchObject({ id: summary.id, status: "processing", sections: null });
    await c.app.deps.queue.drain();
  });

  // Random weights write noise within the grammar, slowly to its bounds: a small template
  // keeps the answer short enough to complete, so the whole path runs on the real engine.
  test("on the real LlamaLlm, the JSON-schema grammar lets the model cite only segments that exist", async () => {
    const llm = new LlamaLlm({ model: "tiny-gguf", path: ensureTestModels().gguf, gpu: "off" });
    const template = { properties: { plan: { type: "array", title: "Plan", items: { type: "string", maxLength: 6 }, maxItems: 3 } }, required: ["plan"] };
    const segments = SPOKEN.map((text, i) => ({ start: i * 2, end: i * 2 + 2, text, speaker: "SPEAKER_1", confidence: 0.9 }));
    const lines = segments.map((s, i) => `[${i + 1}] ${s.text}`).join("\n");
    const schema = citedSchema(template, segments.length) as any;
    // Random weights may write no statement, or none with a number: asking for both shows which numbers the grammar lets through.
    schema.properties.plan.minItems = 2;
    schema.properties.plan.items.minItems = 2;
    const completion = await llm.complete({ messages: [{ role: "user", content: lines }], jsonSchema: schema, maxTokens: 400, temperature: 0 });
    expect(completion.finishReason).toBe("stop");
    const answer = JSON.parse(completion.text);
    const cited = answer.plan.flatMap(([, ...numbers]: [string, ...number[]]) => numbers);
    expect(cited.length).toBeGreaterThanOrEqual(2);
    for (const n of cited) expect([1, 2, 3]).toContain(n);
    const read = readCitedAnswer(template, answer, segments, "rec_x");
    expectResolved(read.sections, { recording_id: "rec_x", segments });
  }, 120_000);
});
