import type { ChatMessage, Completion, CompletionRequest, Llm } from "./llm";

type JsonSchema = { type?: string; enum?: unknown[]; properties?: Record<string, JsonSchema>; prefixItems?: JsonSchema[]; items?: JsonSchema };

export type LlmScript = {
  contextTokens?: number;
  /** Replaces the answer text (e.g. to wrap it in reasoning, or to return non-JSON). */
  answer?: (text: string, request: { messages: ChatMessage[]; jsonSchema?: object }) => string;
  finishReason?: string;
  error?: Error;
  /** Never answers; rejects only when the signal aborts. */
  hang?: boolean;
};

const words = (text: string) => text.split(/\s+/).filter(Boolean);

/** A value of the schema that quotes the input, so tests can see what each call was given. */
function valueOf(schema: JsonSchema, input: string): unknown {
  if (schema.enum) return schema.enum[0];
  if (schema.type === "object") return Object.fromEntries(Object.entries(schema.properties ?? {}).map(([k, s]) => [k, valueOf(s, input)]));
  if (schema.type === "array") return [...(schema.prefixItems ?? []).map((s) => valueOf(s, input)), valueOf(schema.items ?? { type: "string" }, input)];
  if (schema.type === "number" || schema.type === "integer") return 1;
  if (schema.type === "boolean") return true;
  return `about: ${words(input).slice(0, 12).join(" ")}`;
}

/**
 * TEST DOUBLE: a deterministic LLM for summary tests, where a generated GGUF model gives
 * random text. A token is a whitespace-separated word; with a JSON schema it answers a
 * value of that schema, without one a short note quoting the start of the input.
 */
export class ScriptedLlm implements Llm {
  readonly provider = "test";
  readonly model = "test-scripted-llm";
  /** Every request, for tests that check what the model was given (map-reduce inputs). */
  readonly requests: { messages: ChatMessage[]; jsonSchema?: object }[] = [];

  constructor(private readonly script: LlmScript = {}) {}

  installed(): boolean {
    return true;
  }

  async contextTokens(): Promise<number> {
    return this.script.contextTokens ?? 4096;
  }

  async countTokens(text: string): Promise<number> {
    return words(text).length;
  }

  async complete(request: CompletionRequest): Promise<Completion> {
    this.requests.push({ messages: request.messages, jsonSchema: request.jsonSchema });
    if (this.script.error) throw this.script.error;
    if (this.script.hang) {
      return new Promise((_, reject) => request.signal?.addEventListener("abort", () => reject(request.signal?.reason), { once: true }));
    }
    const input = request.messages.at(-1)?.content ?? "";
    let text = request.jsonSchema ? JSON.stringify(valueOf(request.jsonSchema as JsonSchema, input)) : `notes: ${words(input).slice(0, 8).join(" ")}`;
    text = this.script.answer?.(text, request) ?? text;
    // As a real model: an answer longer than maxTokens is cut off there, finish reason length.
    const cut = !!request.maxTokens && words(text).length > request.maxTokens;
    if (cut) text = words(text).slice(0, request.maxTokens).join(" ");
    return {
      text,
      tokens: { input: words(input).length, output: words(text).length, cached: 0 },
      finishReason: cut ? "length" : (this.script.finishReason ?? "stop"),
    };
  }
}
