import { afterAll, describe, expect, test } from "bun:test";
import { LlmUnavailableError } from "../../src/engines/llm";
import { OpenAiCompatibleLlm } from "../../src/engines/openai-compatible-llm";

let last: any = null;
const server = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  async fetch(req: Request): Promise<Response> {
    last = { path: new URL(req.url).pathname, body: await req.json(), authorization: req.headers.get("authorization") };
    // "slow" never answers before the client's own time limit gives up on it.
    if (last.body.model === "slow") await Bun.sleep(60_000);
    const content = last.body.model === "thinker" ? "<think>The user wants a number.\nSay 42.</think>\n\nThe answer is 42 [1]." : '{"ok":true}';
    return Response.json({
      choices: [{ message: { role: "assistant", content }, finish_reason: "length" }],
      usage: { prompt_tokens: 5, completion_tokens: 2 },
    });
  },
});
afterAll(() => server.stop(true));

// A generous limit, so a busy machine never turns an answer into a timeout; only "slow" meets it.
const llm = (model = "m", baseUrl = `http://127.0.0.1:${server.port}/v1/`, timeoutMs = 10_000) =>
  new OpenAiCompatibleLlm({ baseUrl, model, contextTokens: 4096, timeoutMs });

describe("OpenAI-compatible LLM engine", () => {
  test("posts chat-completions with the JSON schema as response_format, no key header when none is set", async () => {
    const out = await llm().complete({ messages: [{ role: "user", content: "hi" }], jsonSchema: { type: "object" }, maxTokens: 16, temperature: 0 });
    expect(last.path).toBe("/v1/chat/completions");
    expect(last.authorization).toBeNull();
    expect(last.body).toMatchObject({
      model: "m",
      max_tokens: 16,
      temperature: 0,
      response_format: { type: "json_schema", json_schema: { schema: { type: "object" } } },
    });
    expect(out).toEqual({ text: '{"ok":true}', tokens: { input: 5, output: 2, cached: 0 }, finishReason: "length" });
  });

  test("a reasoning model's <think> text is stripped, as for the embedded model", async () => {
    expect((await llm("thinker").complete({ messages: [{ role: "user", content: "hi" }] })).text).toBe("The answer is 42 [1].");
  });

  test("context window is the configured one; tokens are estimated at four characters each", async () => {
    expect(await llm().contextTokens()).toBe(4096);
    expect(await llm().countTokens("x".repeat(10))).toBe(3);
  });

  test("a timeout or a refused connection is LlmUnavailableError", async () => {
    await expect(llm("slow", undefined, 200).complete({ messages: [{ role: "user", content: "hi" }] })).rejects.toBeInstanceOf(LlmUnavailableError);
    await expect(llm("m", "http://127.0.0.1:1/v1").complete({ messages: [{ role: "user", content: "hi" }] })).rejects.toBeInstanceOf(LlmUnavailableError);
  });
});
