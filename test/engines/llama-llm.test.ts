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

  describe("a prefilled prompt start (decision 206)", () => {
    const lines = Array.from(
      { length: 24 },
      (_, i) => `[${i + 1}] [0:${String(i * 2).padStart(2, "0")}] SPEAKER_${(i % 2) + 1}: we review item ${i} on Friday.`,
    );
    const system = { role: "system" as const, content: "You summarize meetings. Answer in JSON." };
    const whole = [system, { role: "user" as const, content: lines.join("\n") }];
    const ask = () => llm.complete({ messages: whole, jsonSchema: schema, maxTokens: 300, temperature: 0 });
    const elsewhere = () => llm.complete({ messages: [{ role: "user", content: "Something else entirely." }], maxTokens: 4 });

    test("gives the answer a cold call gives, evaluating only the rest of the prompt", async () => {
      await elsewhere();
      const cold = await ask();
      expect(cold.tokens.cached).toBeLessThan(cold.tokens.input / 10);
      await elsewhere();
      // As the live job warms it: the transcript so far, twice as it grows.
      for (const n of [8, 16]) {
        const step = await llm.prefill([system, { role: "user", content: `${lines.slice(0, n).join("\n")}\n` }]);
        expect(step.done).toBe(true);
      }
      const warm = await ask();
      expect(warm.text).toBe(cold.text);
      expect(warm.tokens.input).toBe(cold.tokens.input);
      expect(warm.tokens.cached).toBeGreaterThan(cold.tokens.input / 2);
    });

    test("evaluates at most maxNewTokens of the message per call, continuing where the last one stopped", async () => {
      await elsewhere();
      const messages = [system, { role: "user" as const, content: lines.join("\n") }];
      const first = await llm.prefill(messages, { maxNewTokens: 100 });
      expect(first.done).toBe(false);
      const second = await llm.prefill(messages, { maxNewTokens: 100 });
      expect(second.done).toBe(false);
      // The second continues the first: what the first evaluated is kept, and only about 100 more tokens are added.
      expect(second.reused).toBeGreaterThanOrEqual(first.reused + first.evaluated - 2);
      expect(second.evaluated).toBeLessThanOrEqual(102);
      let steps = 2;
      while (!(await llm.prefill(messages, { maxNewTokens: 100 })).done) steps++;
      expect(steps).toBeLessThan(1 + (await llm.countTokens(lines.join("\n"))) / 100 + 1);
      // Something else on the sequence: the next prefill starts over, still bounded.
      await elsewhere();
      const after = await llm.prefill(messages, { maxNewTokens: 100 });
      expect(after.done).toBe(false);
    });
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
