import { afterAll, describe, expect, test } from "bun:test";
import { loadConfig } from "../../src/config";
import { modelJobSlots } from "../../src/engines";
import { LlmUnavailableError } from "../../src/engines/llm";
import { OpenAiCompatibleLlm } from "../../src/engines/openai-compatible-llm";
import { EmbeddingDimensionError, RemoteEmbedder } from "../../src/engines/remote-embedder";
import { RemoteEngineError, Slots } from "../../src/engines/remote-http";
import { languageCode } from "../../src/engines/remote-transcriber";
import { startOpenAiCompatibleDouble } from "../support/openai-compatible-server";

const server = startOpenAiCompatibleDouble({ dimension: 8 });
afterAll(() => server.stop());

// Short waits between attempts; a generous attempt timeout, so a busy machine never turns an answer into a hang.
const policy = { concurrency: 2, retryDelaysMs: [10, 10] };
const endpoint = (timeoutMs = 10_000) => ({ baseUrl: server.url, model: "m", timeoutMs });
const reset = () => {
  server.requests.length = 0;
  server.failures = [];
  server.failOn = null;
  server.dimension = 8;
  server.answers = ['{"ok":true}'];
  server.refuseJsonSchema = false;
};

describe("remote embedder (OpenAI-compatible /embeddings)", () => {
  test("learns the dimension from the server once and returns one vector per text, in order", async () => {
    reset();
    const embedder = new RemoteEmbedder({ ...endpoint(), apiKey: "k" }, policy);
    expect(await embedder.dimension()).toBe(8);
    const [a, b, again] = await embedder.embed(["alpha", "beta", "alpha"]);
    expect(a).toHaveLength(8);
    expect(Array.from(a!)).toEqual(Array.from(again!));
    expect(Array.from(a!)).not.toEqual(Array.from(b!));
    expect(server.requests.filter((r) => r.path === "/v1/embeddings")).toHaveLength(2); // the probe, then the texts
    expect(server.requests[1]).toMatchObject({ body: { model: "m", input: ["alpha", "beta", "alpha"] }, authorization: "Bearer k" });
  });

  test("a 500 is retried after the backoff and the call then succeeds", async () => {
    reset();
    server.failures = [500, 503];
    expect(await new RemoteEmbedder(endpoint(), policy).embed(["x"])).toHaveLength(1);
    expect(server.requests).toHaveLength(4); // probe: 500, 503, ok; then the text
  });

  test("a server that keeps answering 500 fails with its status named, after every retry", async () => {
    reset();
    server.failures = [500, 500, 500];
    const err = await new RemoteEmbedder(endpoint(), policy).embed(["x"]).catch((e) => e);
    expect(err).toBeInstanceOf(RemoteEngineError);
    expect(err.status).toBe(500);
    expect(err.message).toContain(`The embedding server at ${server.url} answered 500`);
    expect(err.message).toContain("(3 attempts)");
  });

  test("a server that hangs is given up on at the timeout, retried, then named", async () => {
    reset();
    server.failures = ["hang", "hang", "hang"];
    const err = await new RemoteEmbedder(endpoint(300), policy).dimension().catch((e) => e);
    expect(err).toBeInstanceOf(RemoteEngineError);
    expect(err.message).toContain("did not answer within 300 ms (3 attempts)");
  });

  test("vectors of another length than the index's are refused, and the dimension is learnt again", async () => {
    reset();
    const embedder = new RemoteEmbedder(endpoint(), policy);
    expect(await embedder.dimension()).toBe(8);
    server.dimension = 12; // the operator swapped the server's model
    const err = await embedder.embed(["x"]).catch((e) => e);
    expect(err).toBeInstanceOf(EmbeddingDimensionError);
    expect(err.message).toContain("returned vectors of 12 numbers for m; the search index holds 8");
    expect(await embedder.dimension()).toBe(12);
  });
});

describe("remote LLM (OpenAI-compatible /chat/completions)", () => {
  const llm = (extra: Partial<ConstructorParameters<typeof OpenAiCompatibleLlm>[0]> = {}) =>
    new OpenAiCompatibleLlm({ baseUrl: server.url, model: "m", contextTokens: 4096, timeoutMs: 10_000, policy, ...extra });
  const schema = { type: "object", properties: { title: { type: "string" } }, required: ["title"] };
  const messages = [{ role: "user" as const, content: "Summarise." }];

  test("a schema goes as JSON-schema structured output where the server takes it", async () => {
    reset();
    server.answers = ['{"title":"Budget"}'];
    expect((await llm().complete({ messages, jsonSchema: schema })).text).toBe('{"title":"Budget"}');
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]!.body.response_format).toMatchObject({ type: "json_schema", json_schema: { schema } });
  });

  test("a server without structured output gets the schema in the prompt; a bad answer is sent back once to be repaired", async () => {
    reset();
    server.refuseJsonSchema = true;
    server.answers = ["Here you go: {title: Budget}", '{"title":"Budget"}'];
    const engine = llm();
    const out = await engine.complete({ messages, jsonSchema: schema });
    expect(out.text).toBe('{"title":"Budget"}');
    expect(out.tokens.input).toBe(20); // both calls counted
    const [refused, prompted, repair] = server.requests.map((r) => r.body);
    expect(refused.response_format.type).toBe("json_schema");
    expect(prompted.response_format).toBeUndefined();
    expect(prompted.messages[0]).toMatchObject({ role: "system", content: expect.stringContaining('"required":["title"]') });
    expect(repair.messages.at(-2)).toEqual({ role: "assistant", content: "Here you go: {title: Budget}" });
    expect(repair.messages.at(-1).content).toContain("not valid JSON");
    // The refusal is remembered: the next call does not ask for structured output again.
    server.requests.length = 0;
    server.answers = ['{"title":"Again"}'];
    await engine.complete({ messages, jsonSchema: schema });
    expect(server.requests.map((r) => r.body.response_format)).toEqual([undefined]);
  });

  test("background calls retry a 500; a person asking gets one attempt", async () => {
    reset();
    server.failures = [500];
    expect((await llm().complete({ messages })).text).toBe('{"ok":true}');
    server.failures = [500];
    const err = await llm()
      .complete({ messages, interactive: true })
      .catch((e) => e);
    expect(err).toBeInstanceOf(LlmUnavailableError);
    expect(err.message).toContain("answered 500: failure 500 as the test asked (1 attempt)");
  });
});

describe("remote plumbing", () => {
  test("no more calls in flight than the slots; the rest run as slots free, in order", async () => {
    const slots = new Slots(2);
    let inFlight = 0;
    let most = 0;
    const order: number[] = [];
    const call = (i: number) =>
      slots.run(async () => {
        most = Math.max(most, ++inFlight);
        await Bun.sleep(5);
        inFlight--;
        order.push(i);
        return i;
      });
    expect(await Promise.all([1, 2, 3, 4, 5].map(call))).toEqual([1, 2, 3, 4, 5]);
    expect(most).toBe(2);
  });

  test("a call waiting for a slot leaves when its job's signal aborts", async () => {
    const slots = new Slots(1);
    let release = () => {};
    const first = slots.run(() => new Promise<void>((r) => (release = r)));
    const controller = new AbortController();
    const waiting = slots.run(async () => "ran", undefined, controller.signal);
    controller.abort(new Error("time limit"));
    await expect(waiting).rejects.toThrow("time limit");
    release();
    await first;
    expect(await slots.run(async () => "free again")).toBe("free again");
  });

  test("verbose_json languages are read as names or codes", () => {
    expect(languageCode("english")).toBe("en");
    expect(languageCode("Haitian Creole")).toBe("ht");
    expect(languageCode("de")).toBe("de");
    expect(languageCode("klingon")).toBeNull();
  });
});

describe("remote engines' configuration", () => {
  test("a remote engine without its server is a configuration error naming the variable", () => {
    expect(() => loadConfig({ PARLEY_TRANSCRIBER: "openai_compatible" })).toThrow(
      "PARLEY_TRANSCRIBER_BASE_URL: required with PARLEY_TRANSCRIBER=openai_compatible",
    );
    expect(() => loadConfig({ PARLEY_EMBEDDER: "openai_compatible", PARLEY_EMBEDDER_BASE_URL: "http://e/v1" })).toThrow(
      "PARLEY_EMBEDDER_MODEL: required with PARLEY_EMBEDDER=openai_compatible",
    );
    expect(() => loadConfig({ PARLEY_REDACTION_LLM: "openai_compatible" })).toThrow(
      "PARLEY_OPENAI_BASE_URL: required with PARLEY_REDACTION_LLM=openai_compatible",
    );
  });

  test("model job slots rise to the remote concurrency only when a job engine is remote", () => {
    expect(modelJobSlots(loadConfig({ PARLEY_REMOTE_CONCURRENCY: "6" }))).toBe(2);
    expect(
      modelJobSlots(loadConfig({ PARLEY_REMOTE_CONCURRENCY: "6", PARLEY_TRANSCRIBER: "openai_compatible", PARLEY_TRANSCRIBER_BASE_URL: "http://t/v1" })),
    ).toBe(6);
    expect(
      modelJobSlots(
        loadConfig({ PARLEY_JOB_CONCURRENCY: "8", PARLEY_LLM: "openai_compatible", PARLEY_OPENAI_BASE_URL: "http://l/v1", PARLEY_OPENAI_MODEL: "m" }),
      ),
    ).toBe(8);
  });
});
