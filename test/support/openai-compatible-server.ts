/**
 * TEST DOUBLE for remote HTTP: a small OpenAI-compatible server (`/v1/embeddings`,
 * `/v1/chat/completions`) standing in for vLLM, TEI or Ollama in the remote engines' tests
 * (issue 33). It is a real HTTP server on a loopback port; what it answers is set by the test:
 * its embedding dimension, failures to give first (status codes or hangs), and the chat
 * answers in turn. Every request is recorded.
 */
export type Failure = number | "hang";

export type OpenAiCompatibleDouble = {
  url: string;
  /** Requests as received, path and JSON body. */
  requests: { path: string; body: any; authorization: string | null }[];
  /** Vectors' length from now on. */
  dimension: number;
  /** Answered (in order) before the next requests are served normally: an HTTP status, or a hang until the client gives up. */
  failures: Failure[];
  /** Chat contents answered in turn, each taken off as it is used except the last, which repeats; a function sees the request's body. */
  answers: (string | ((body: any) => string | Promise<string>))[];
  /** Only requests to this path (/v1/chat/completions) meet the failures; null: any. */
  failOn: string | null;
  /** Answer 400 to a chat request with response_format json_schema, as servers without structured output do. */
  refuseJsonSchema: boolean;
  stop(): void;
};

/** A deterministic unit-length vector for a text: the same text always gets the same vector. */
function vectorFor(text: string, dimension: number): number[] {
  let seed = 2166136261;
  for (const ch of text) seed = Math.imul(seed ^ ch.charCodeAt(0), 16777619);
  const v = Array.from({ length: dimension }, (_, i) => Math.sin(seed + i * 12.9898) + 0.001);
  const norm = Math.hypot(...v);
  return v.map((x) => x / norm);
}

export function startOpenAiCompatibleDouble(options: { dimension?: number } = {}): OpenAiCompatibleDouble {
  const hanging = new Set<() => void>();
  const double: OpenAiCompatibleDouble = {
    url: "",
    requests: [],
    dimension: options.dimension ?? 8,
    failures: [],
    failOn: null,
    answers: ['{"ok":true}'],
    refuseJsonSchema: false,
    stop: () => {
      for (const release of hanging) release();
      server.stop(true);
    },
  };
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 0,
    async fetch(req) {
      const path = new URL(req.url).pathname;
      const body = await req.json().catch(() => null);
      double.requests.push({ path, body, authorization: req.headers.get("authorization") });
      const failure = double.failOn === null || double.failOn === path ? double.failures.shift() : undefined;
      if (failure === "hang") {
        // Held until the client's own timeout closes the connection (or the server stops).
        await new Promise<void>((resolve) => {
          hanging.add(resolve);
          req.signal.addEventListener("abort", () => resolve(), { once: true });
        });
        return new Response("gone", { status: 599 });
      }
      if (typeof failure === "number") return new Response(`failure ${failure} as the test asked`, { status: failure });
      if (path === "/v1/embeddings") {
        const input: string[] = Array.isArray(body?.input) ? body.input : [body?.input];
        return Response.json({
          object: "list",
          model: body?.model,
          data: input.map((text, index) => ({ object: "embedding", index, embedding: vectorFor(String(text), double.dimension) })),
        });
      }
      if (path === "/v1/chat/completions") {
        if (double.refuseJsonSchema && body?.response_format?.type === "json_schema")
          return Response.json({ error: { message: "response_format json_schema is not supported" } }, { status: 400 });
        const answer = (double.answers.length > 1 ? double.answers.shift() : double.answers[0])!;
        const content = typeof answer === "function" ? await answer(body) : answer;
        return Response.json({
          model: body?.model,
          choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
          usage: { prompt_tokens: 10, completion_tokens: 5 },
        });
      }
      return new Response("not found", { status: 404 });
    },
  });
  double.url = `http://127.0.0.1:${server.port}/v1`;
  return double;
}
