import type { ExcludeWait } from "./turns";

export type ChatMessage = { role: "system" | "user" | "assistant"; content: string };

export type Completion = {
  text: string;
  tokens: { input: number; output: number; cached: number };
  /** stop, length, or error */
  finishReason: string;
};

export type CompletionRequest = {
  messages: ChatMessage[];
  /** Output constrained to this schema (a grammar for llama.cpp). */
  jsonSchema?: object;
  maxTokens?: number;
  temperature?: number;
  signal?: AbortSignal;
  /** An engine that runs one call at a time passes its wait for earlier calls through this, so a job's time limit leaves it out. */
  excludeWait?: ExcludeWait;
  /** A person waits for the answer (Ask): it does not queue behind background model work for the cores (decision 110). */
  interactive?: boolean;
};

/** A language model (implementations: embedded node-llama-cpp; an OpenAI-compatible server). */
export interface Llm {
  readonly provider: string;
  readonly model: string;
  /** Whether it can be asked without a missing-model error: optional work (redaction's second pass) runs only then. */
  installed(): boolean;
  /** Context window in tokens, for fitting transcripts and map-reduce. */
  contextTokens(): Promise<number>;
  countTokens(text: string): Promise<number>;
  complete(request: CompletionRequest): Promise<Completion>;
  /**
   * Evaluates the start of a prompt ahead of the call that will need it (its last message is
   * a user message still being written), so that call evaluates only the rest; for engines
   * that keep an evaluated prompt (the embedded one), absent elsewhere. It never changes an answer.
   */
  prefill?(messages: ChatMessage[], run?: PrefillOptions): Promise<Prefilled>;
}

export type PrefillOptions = { signal?: AbortSignal; excludeWait?: ExcludeWait; maxNewTokens?: number };
/** Tokens a prefill evaluated and those it found already evaluated; done once the whole last message is in. */
export type Prefilled = { evaluated: number; reused: number; done: boolean };

/** Reasoning models think aloud between these tags; a summary or answer never includes it. */
export function stripReasoning(text: string): string {
  return text
    .replace(/<think>[\s\S]*?<\/think>/g, "")
    .replace(/^[\s\S]*?<\/think>/, "") // an opening tag the chat template already emitted
    .replace(/<think>[\s\S]*$/, "") // cut off mid-thought by maxTokens
    .trim();
}

/** Thrown when the model cannot be used at all (missing file, server down): 502 for Ask, failed summary. */
export class LlmUnavailableError extends Error {}
