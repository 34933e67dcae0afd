import { availableParallelism } from "node:os";
import { join } from "node:path";
import { describe, expect, test } from "bun:test";
import { z } from "zod";
import { ensureTestModels } from "../../scripts/test-models/cache";
import { TINY_GGUF_CONTEXT } from "../../scripts/test-models/gguf";
import { generationThreads, LlamaLlm } from "../../src/engines/llama-llm";
import { stripReasoning } from "../../src/engines/llm";
import { MissingModelError } from "../../src/engines/missing-model";
import { makeTempDir, makeTestDeps } from "../helpers";

const models = ensureTestModels();
const llm = new LlamaLlm({ model: "tiny", path: models.gguf, gpu: "off" });

const schema = {
  type: "object",
  properties: {
    title: { type: "string", maxLength: 24 },
    action_items: { type: "array", items: { type: "string", maxLength: 12 }, maxItems: 3 },
    urgent: { type: "boolean" },
    tone: { enum: ["calm", "tense"] },
  },
} as const;
const parsed = z.object({ title: z.string(), action_items: z.array(z.string()).max(3), urgent: z.boolean(), tone: z.enum(["calm", "tense"]) });

describe("generation threads", () => {
  const llama = (cpuMathCores: number) => ({ cpuMathCores }) as Parameters<typeof generationThreads>[0];
  const big = 1024 ** 3;

  test("never more threads than the process may run at once, whatever the CPU reports", () => {
    expect(generationThreads(llama(64), big)).toBe(availableParallelism());
  });

  test("one per math core when the process may run more", () => {
    expect(generationThreads(llama(1), big)).toBe(1);
  });

  test("a toy model runs on one thread", () => {
    expect(generationThreads(llama(64), 4 * 1024 ** 2)).toBe(1);
  });

  test("the loaded context uses them", async () => {
    const { context } = await llm.load();
    expect(context.currentThreads).toBe(1);
  });
});

describe("LlamaLlm on a generated GGUF model", () => {
  test("a JSON schema constrains the output to JSON that parses against it, with token counts", async () => {
    const out = await llm.complete({
      messages: [
        { role: "system", content: "You summarize meetings." },
        { role: "user", content: "Summarize: we agreed to ship on Friday." },
      ],
      jsonSchema: schema,
      maxTokens: 300,
    });
    expect(parsed.safeParse(JSON.parse(out.text)).success).toBe(true);
    expect(out.finishReason).toBe("stop");
    expect(out.tokens.input).toBeGreaterThan(0);
    expect(out.tokens.output).toBeGreaterThan(0);
    expect(out.tokens.cached).toBe(0);
  });

  test("maxTokens bounds free text and reports finishReason length", async () => {
    const out = await llm.complete({ messages: [{ role: "user", content: "Tell me everything." }], maxTokens: 5 });
    expect(out.tokens.output).toBeLessThanOrEqual(5);
    expect(typeof out.text).toBe("string");
  });

  test("counts tokens and reports its context window", async () => {
    expect(await llm.countTokens("the meeting summary")).toBeGreaterThan(0);
    expect(await llm.countTokens("the meeting summary, and much more text after it")).toBeGreaterThan(await llm.countTokens("the meeting summary"));
    expect(await llm.contextTokens()).toBe(TINY_GGUF_CONTEXT);
    expect(await llm.backend()).toBe("cpu");
  });

  test("with PARLEY_GPU=auto and no GPU device, it says it runs on the CPU (a GPU build may load and find none)", async () => {
    const auto = new LlamaLlm({ model: "tiny", path: models.gguf, gpu: "auto" });
    const { llama, model } = await auto.load();
    const devices = await llama.getGpuDeviceNames();
    expect(await auto.backend()).toBe(devices.length ? (llama.gpu as string) : "cpu");
    await model.dispose();
  });

  test("an aborted signal rejects", async () => {
    const controller = new AbortController();
    controller.abort(new Error("time limit"));
    await expect(llm.complete({ messages: [{ role: "user", content: "hi" }], signal: controller.signal })).rejects.toThrow("time limit");
  });

  test("a missing model is a MissingModelError naming the install command", async () => {
    const missing = new LlamaLlm({ model: "qwen2.5-1.5b-instruct-q4", path: join(makeTempDir(), "none.gguf"), gpu: "off" });
    const err = await missing.countTokens("x").catch((e) => e);
    expect(err).toBeInstanceOf(MissingModelError);
    expect(err.message).toContain("models pull qwen2.5-1.5b-instruct-q4");
  });

  test("createEngines wires it from PARLEY_LLM_MODEL (a path works as a name)", async () => {
    const deps = await makeTestDeps({ env: { PARLEY_LLM_MODEL: models.gguf } });
    expect(deps.engines.llm).toBeInstanceOf(LlamaLlm);
    expect(deps.engines.llm.provider).toBe("llama_cpp");
  });
});

describe("stripReasoning", () => {
  test.each([
    ["<think>plan</think>\nAnswer", "Answer"],
    ["plan only</think>Answer", "Answer"],
    ["Answer <think>unfinished", "Answer"],
    ["<think>a</think>One<think>b</think> two", "One two"],
    ["No reasoning here", "No reasoning here"],
  ])("%p -> %p", (input, expected) => {
    expect(stripReasoning(input)).toBe(expected);
  });
});
