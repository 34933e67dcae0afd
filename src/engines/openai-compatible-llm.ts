import { type ChatMessage, type Completion, type CompletionRequest, type Llm, LlmUnavailableError, stripReasoning } from "./llm";
import { type RemoteAnswer, RemoteClient, RemoteEngineError, type RemotePolicy } from "./remote-http";

export type OpenAiCompatibleOptions = {
  /** Base URL including the API prefix, as servers document it: http://gpu-box:8000/v1 (vLLM), http://host:11434/v1 (Ollama). */
  baseUrl: string;
  apiKey?: string;
  model: string;
  /** The served model's context window; servers do not report it in one standard way, so the operator states it. */
  contextTokens: number;
  timeoutMs: number;
  /** Calls in flight and retries (PARLEY_REMOTE_*); absent: one call at a time, no retry. */
  policy?: RemotePolicy;
};

type ChatCompletionResponse = {
  model?: string;
  choices?: { message?: { content?: string | null }; finish_reason?: string | null }[];
  usage?: { prompt_tokens?: number; completion_tokens?: number; prompt_tokens_details?: { cached_tokens?: number } | null };
};

/** The JSON object in a model's answer, checked against the schema's top level; a reason when it is not one. */
export function readJsonAnswer(text: string, schema: object): { value: Record<string, unknown> } | { error: string } {
  const answer = stripReasoning(text);
  let value: unknown;
  try {
    value = JSON.parse(answer.slice(answer.indexOf("{"), answer.lastIndexOf("}") + 1));
  } catch (err) {
    return { error: `not valid JSON (${(err as Error).message})` };
  }
  if (!value || typeof value !== "object" || Array.isArray(value)) return { error: "not a JSON object" };
  const missing = ((schema as { required?: string[] }).required ?? []).filter((key) => !(key in value));
  return missing.length ? { error: `missing ${missing.join(", ")}` } : { value: value as Record<string, unknown> };
}

/**
 * An LLM behind the OpenAI chat-completions protocol (vLLM, llama.cpp server, Ollama): for
 * GPU servers and scale-out, for Ask and (PARLEY_LLM=openai_compatible) summaries. A schema
 * goes as JSON-schema structured output; a server that refuses that gets the schema in the
 * prompt instead, its answer is checked, and a bad one is sent back once to be repaired
 * (decision 190). Every failure to get an answer is an LlmUnavailableError, which Ask turns
 * into 502 and a summary into processing_error.
 */
export class OpenAiCompatibleLlm implements Llm {
  readonly provider = "openai_compatible";
  private readonly client: RemoteClient;
  /** Learnt from the first refusal: this server takes no response_format of type json_schema. */
  private schemaOutput = true;

  constructor(private readonly options: OpenAiCompatibleOptions) {
    this.client = new RemoteClient("LLM", options, options.policy ?? { concurrency: 1, retryDelaysMs: [] });
  }

  get model(): string {
    return this.options.model;
  }

  /** Configured is installed: whether the server answers is known only by asking it. */
  installed(): boolean {
    return true;
  }

  async contextTokens(): Promise<number> {
    return this.options.contextTokens;
  }

  /** No tokenizer for a remote model: four characters a token, the usual estimate for English, rounded up. */
  async countTokens(text: string): Promise<number> {
    return Math.ceil(text.length / 4);
  }

  async complete(request: CompletionRequest): Promise<Completion> {
    try {
      const { jsonSchema } = request;
      if (!jsonSchema) return this.read(await this.chat(request, request.messages, false));
      if (this.schemaOutput) {
        const answer = await this.chat(request, request.messages, true);
        // 400 or 422 to a request with response_format: the server does not do structured output.
        if (answer.status !== 400 && answer.status !== 422) return this.read(answer);
        this.schemaOutput = false;
      }
      return await this.promptedJson(request, jsonSchema);
    } catch (err) {
      if (err instanceof RemoteEngineError) throw new LlmUnavailableError(err.message);
      throw err;
    }
  }

  /** The schema in the system prompt; an answer that does not fit it goes back once, with what was wrong. */
  private async promptedJson(request: CompletionRequest, schema: object): Promise<Completion> {
    const instruction = `Answer with one JSON object only, no other text, matching this JSON schema:\n${JSON.stringify(schema)}`;
    const messages: ChatMessage[] = [{ role: "system", content: instruction }, ...request.messages];
    const first = this.read(await this.chat(request, messages, false));
    const checked = readJsonAnswer(first.text, schema);
    if ("value" in checked) return first;
    const repair: ChatMessage[] = [
      ...messages,
      { role: "assistant", content: first.text },
      { role: "user", content: `That answer is ${checked.error}. Write it again as one JSON object matching the schema, and nothing else.` },
    ];
    const second = this.read(await this.chat(request, repair, false));
    return { ...second, tokens: { input: first.tokens.input + second.tokens.input, output: first.tokens.output + second.tokens.output, cached: 0 } };
  }

  private chat(request: CompletionRequest, messages: ChatMessage[], schemaOutput: boolean): Promise<RemoteAnswer> {
    const body = {
      model: this.options.model,
      messages,
      stream: false,
      ...(request.maxTokens ? { max_tokens: request.maxTokens } : {}),
      ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
      ...(schemaOutput && request.jsonSchema
        ? { response_format: { type: "json_schema", json_schema: { name: "output", schema: request.jsonSchema, strict: true } } }
        : {}),
    };
    // A person waiting (Ask) gets one attempt: a retry after backoff would leave them waiting on a server that is down.
    return this.client.post({
      path: "/chat/completions",
      body: JSON.stringify(body),
      contentType: "application/json",
      signal: request.signal,
      excludeWait: request.excludeWait,
      once: request.interactive,
    });
  }

  private read(answer: RemoteAnswer): Completion {
    const parsed = this.client.json<ChatCompletionResponse>(answer);
    const choice = parsed.choices?.[0];
    if (typeof choice?.message?.content !== "string")
      throw new RemoteEngineError(`The LLM server at ${this.client.url} answered without a message.`, answer.status);
    return {
      // Reasoning models served this way (vLLM, Ollama) return their <think> text in the content too.
      text: stripReasoning(choice.message.content),
      tokens: {
        input: parsed.usage?.prompt_tokens ?? 0,
        output: parsed.usage?.completion_tokens ?? 0,
        cached: parsed.usage?.prompt_tokens_details?.cached_tokens ?? 0,
      },
      finishReason: choice.finish_reason ?? "stop",
    };
  }
}
