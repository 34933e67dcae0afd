import { type ChatMessage, type Completion, type Llm, LlmUnavailableError, stripReasoning } from "./llm";

export type OpenAiCompatibleOptions = {
  /** Base URL including the API prefix, as servers document it: http://gpu-box:8000/v1 (vLLM), http://host:11434/v1 (Ollama). */
  baseUrl: string;
  apiKey?: string;
  model: string;
  /** The served model's context window; servers do not report it in one standard way, so the operator states it. */
  contextTokens: number;
  timeoutMs: number;
};

type ChatCompletionResponse = {
  model?: string;
  choices?: { message?: { content?: string | null }; finish_reason?: string | null }[];
  usage?: { prompt_tokens?: number; completion_tokens?: number; prompt_tokens_details?: { cached_tokens?: number } | null };
};

/**
 * An LLM behind the OpenAI chat-completions protocol (vLLM, llama.cpp server, Ollama):
 * for GPU servers and scale-out. Every failure to get an answer (refused connection,
 * timeout, non-2xx, malformed body) is an LlmUnavailableError, which Ask turns into 502.
 */
export class OpenAiCompatibleLlm implements Llm {
  readonly provider = "openai_compatible";

  constructor(private readonly options: OpenAiCompatibleOptions) {}

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

  async complete(request: {
    messages: ChatMessage[];
    jsonSchema?: object;
    maxTokens?: number;
    temperature?: number;
    signal?: AbortSignal;
  }): Promise<Completion> {
    const timeout = AbortSignal.timeout(this.options.timeoutMs);
    const body = {
      model: this.options.model,
      messages: request.messages,
      stream: false,
      ...(request.maxTokens ? { max_tokens: request.maxTokens } : {}),
      ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
      ...(request.jsonSchema ? { response_format: { type: "json_schema", json_schema: { name: "output", schema: request.jsonSchema, strict: true } } } : {}),
    };
    let res: Response;
    try {
      res = await fetch(`${this.options.baseUrl.replace(/\/$/, "")}/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", ...(this.options.apiKey ? { authorization: `Bearer ${this.options.apiKey}` } : {}) },
        body: JSON.stringify(body),
        signal: request.signal ? AbortSignal.any([request.signal, timeout]) : timeout,
      });
    } catch (err) {
      throw new LlmUnavailableError(`The OpenAI-compatible server at ${this.options.baseUrl} could not be reached: ${(err as Error).message}`);
    }
    const text = await res.text().catch(() => "");
    if (!res.ok) throw new LlmUnavailableError(`The OpenAI-compatible server answered ${res.status}: ${text.slice(0, 200)}`);
    let parsed: ChatCompletionResponse;
    try {
      parsed = JSON.parse(text) as ChatCompletionResponse;
    } catch {
      throw new LlmUnavailableError("The OpenAI-compatible server answered with a body that is not JSON.");
    }
    const choice = parsed.choices?.[0];
    if (typeof choice?.message?.content !== "string") throw new LlmUnavailableError("The OpenAI-compatible server answered without a message.");
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
