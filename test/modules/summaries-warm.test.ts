import { beforeAll, describe, expect, test } from "bun:test";
import { ensureTestModels } from "../../scripts/test-models/cache";
import { LlamaLlm } from "../../src/engines/llama-llm";
import type { ChatMessage, Completion, CompletionRequest, PrefillOptions, Prefilled } from "../../src/engines/llm";
import { generateSummary } from "../../src/modules/summaries/generate";
import { TEMPLATES } from "../../src/modules/summaries/templates";
import { likelySpeakers, type ProvisionalSegment, stepTokens, WARM_STEP_TOKENS, warmSummaryPrompt } from "../../src/modules/summaries/warm";
import type { Segment } from "../../src/modules/transcriptions/schema";
import { makeTenant, makeTestApp } from "../helpers";
import { seedRecording, voiced, wav } from "./pipeline-fixtures";

/** The real engine on the tiny generated GGUF, its calls noted: what each prefill was given, and each completion's token counts. */
class ObservedLlama extends LlamaLlm {
  readonly prefills: string[] = [];
  readonly completions: Completion["tokens"][] = [];
  override async prefill(messages: ChatMessage[], run?: PrefillOptions): Promise<Prefilled> {
    this.prefills.push(messages.at(-1)!.content);
    return super.prefill(messages, run);
  }
  override async complete(request: CompletionRequest): Promise<Completion> {
    const out = await super.complete(request);
    this.completions.push(out.tokens);
    return out;
  }
}

const WORDS = ["we ship on friday", "the budget is late", "anna sends notes", "ok", "review the plan", "yes agreed"];
/** As the live job commits them: the third has no provisional speaker yet (too short to tell). */
const provisional: ProvisionalSegment[] = WORDS.concat(WORDS).map((text, i) => ({
  start: i * 3,
  text,
  speaker: i === 2 ? null : `SPEAKER_${(Math.floor(i / 2) % 2) + 1}`,
}));
/** The completed transcription's segments: the same, speakers assigned over the whole recording. */
const completed: Segment[] = likelySpeakers(provisional).map((s) => ({ ...s, end: s.start + 2, confidence: 0.9 }));

let app: Awaited<ReturnType<typeof makeTestApp>>;
let llm: ObservedLlama;
let scope: { projectId: string; mode: "test" };
let key: string;

/** A streaming recording's transcription, still processing (the job that would complete it is never run). */
async function processingTranscription(): Promise<{ id: string; recording_id: string }> {
  const rec = await seedRecording(app.deps, scope, wav(voiced(2)));
  const r = await app.call("POST", "/v1/transcriptions", { key, body: { recording_id: rec } });
  expect(r.body.status).toBe("processing");
  return r.body;
}

/** The transcription ends without a summary (as a failed verification ends it): its warm prompt is no longer needed. */
const fail = (id: string) => app.deps.db.run("UPDATE transcriptions SET status = 'failed' WHERE id = ?", [id]);
const run = () => ({ signal: new AbortController().signal });
/** A call on the same sequence about something else: what was evaluated before is gone. */
const elsewhere = () => llm.complete({ messages: [{ role: "user", content: "Something else." }], maxTokens: 2 });

beforeAll(async () => {
  llm = new ObservedLlama({ model: "tiny", path: ensureTestModels().gguf, gpu: "off" });
  app = await makeTestApp({ engines: { llm } });
  const tenant = makeTenant(app.deps);
  scope = { projectId: tenant.project.id, mode: "test" };
  key = tenant.test;
});

describe("the summary prompt warmed while a recording streams (decision 206)", () => {
  test("gives the summary a cold run gives, evaluating only what the warm prompt lacked", async () => {
    const txn = await processingTranscription();
    await elsewhere();
    const cold = await generateSummary(llm, TEMPLATES.general, completed, txn.recording_id, run());
    const coldTokens = llm.completions.at(-1)!;
    expect(coldTokens.cached).toBeLessThan(coldTokens.input / 10);

    await elsewhere();
    // The live job's commits: the transcript so far, growing.
    await warmSummaryPrompt(app.deps, scope, txn.id, () => provisional.slice(0, 5));
    await warmSummaryPrompt(app.deps, scope, txn.id, () => provisional.slice(0, 10));
    expect(llm.prefills.at(-1)).toStartWith("[1] [0:00] SPEAKER_1: we ship on friday\n");
    // The unknown speaker is written as the one before it, as the completed transcript most likely has it.
    expect(llm.prefills.at(-1)).toContain("[3] [0:06] SPEAKER_1: anna sends notes\n");
    const warm = await generateSummary(llm, TEMPLATES.general, completed, txn.recording_id, run());
    const warmTokens = llm.completions.at(-1)!;

    expect(warm).toEqual(cold);
    expect(warmTokens.input).toBe(coldTokens.input);
    expect(warmTokens.cached).toBeGreaterThan(coldTokens.input / 2);
    fail(txn.id);
  });

  test("one transcription at a time: another stream's commits warm nothing while the first's summary is to come", async () => {
    const first = await processingTranscription();
    const before = llm.prefills.length;
    await warmSummaryPrompt(app.deps, scope, first.id, () => provisional.slice(0, 4));
    const count = llm.prefills.length;
    expect(count).toBeGreaterThan(before); // in steps of WARM_STEP_TOKENS
    const second = await processingTranscription();
    await warmSummaryPrompt(app.deps, scope, second.id, () => provisional.slice(0, 4));
    expect(llm.prefills.length).toBe(count);
    // The first one completes: its summary is on its way, the warm prompt still held for it.
    const completedAt = (ms: number) =>
      app.deps.db.run("UPDATE transcriptions SET status = 'completed', completed_at = ? WHERE id = ?", [new Date(ms).toISOString(), first.id]);
    completedAt(app.deps.clock.now().getTime());
    await warmSummaryPrompt(app.deps, scope, second.id, () => provisional.slice(0, 4));
    expect(llm.prefills.length).toBe(count);
    // A minute on and still no summary (the configuration changed meanwhile): the second may take it.
    completedAt(app.deps.clock.now().getTime() - 61_000);
    await warmSummaryPrompt(app.deps, scope, second.id, () => provisional.slice(0, 4));
    expect(llm.prefills.length).toBeGreaterThan(count);
    fail(second.id);
  });

  test("nothing is warmed when the recording is not summarised automatically", async () => {
    await app.call("PUT", "/v1/config/project", { key, body: { auto_summarize: false } });
    try {
      const txn = await processingTranscription();
      const count = llm.prefills.length;
      await warmSummaryPrompt(app.deps, scope, txn.id, () => provisional.slice(0, 4));
      expect(llm.prefills.length).toBe(count);
    } finally {
      await app.call("PUT", "/v1/config/project", { key, body: { auto_summarize: true } });
    }
  });

  test("each step first waits for yieldTo (the live job's: no live pass running), so a pass queues behind one step at most (decision 210)", async () => {
    const txn = await processingTranscription();
    await elsewhere();
    const before = llm.prefills.length;
    const release = Promise.withResolvers<void>();
    // The steps taken when each wait began.
    const waits: number[] = [];
    const warming = warmSummaryPrompt(app.deps, scope, txn.id, () => provisional, {
      yieldTo: () => (waits.push(llm.prefills.length - before), release.promise),
    });
    // A whole model call on the same cores while the warming waits: no step is taken meanwhile.
    await elsewhere();
    expect(waits).toEqual([0]);
    expect(llm.prefills.length).toBe(before);
    release.resolve();
    await warming;
    const steps = llm.prefills.length - before;
    expect(steps).toBeGreaterThan(1);
    expect(waits).toEqual(Array.from({ length: steps }, (_, i) => i));
    fail(txn.id);
  });

  test("a step is sized to hold the cores about WARM_STEP_SECONDS at the pace the last one showed (decision 210)", () => {
    expect(stepTokens({ evaluated: 64, seconds: 1.6 })).toBe(20); // 40 tokens a second
    expect(stepTokens({ evaluated: 64, seconds: 0.1 })).toBe(WARM_STEP_TOKENS);
    expect(stepTokens({ evaluated: 8, seconds: 4 })).toBe(8);
    expect(stepTokens(null)).toBe(16);
  });
});
