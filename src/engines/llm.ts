export type ChatMessage = { role: "system" | "user" | "assistant"; content: string };

export type Completion = {
  text: string;
  tokens: { input: number; output: number; cached: number };
  /** stop, length, or error */
  finishReason: string;
};

/** A language model (implementations: embedded node-llama-cpp; an OpenAI-compatible server). */
export interface Llm {
  readonly provider: string;
  readonly model: string;
  /** Context window in tokens, for fitting transcripts and map-reduce. */
  contextTokens(): Promise<number>;
  countTokens(text: string): Promise<number>;
  /** With jsonSchema, output is constrained to that schema (a grammar for llama.cpp). */
  complete(request: { messages: ChatMessage[]; jsonSchema?: object; maxTokens?: number; temperature?: number; signal?: AbortSignal }): Promise<Completion>;
}

/** Thrown when the model cannot be used at all (missing file, server down): 502 for Ask, failed summary. */
export class LlmUnavailableError extends Error {}
