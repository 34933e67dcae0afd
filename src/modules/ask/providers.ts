import type { Deps } from "../../deps";
import type { ChatMessage, Llm } from "../../engines/llm";
import { ApiError } from "../../http/errors";
import { buildPrompt, extractiveAnswer, type Passage } from "./answer";
import type { AskProvider, Tokens } from "./schema";

/** Room kept for the answer when fitting a prompt into the model's context window. */
export const ANSWER_TOKENS = 768;

export type Answer = { text: string; tokens: Tokens; model: string; provider: AskProvider; finishReason: string };

/** A turn ready to run: the provider and, for a model, the exact messages it will get. */
export type PreparedTurn = { provider: AskProvider; llm: Llm | null; messages: ChatMessage[]; passages: Passage[]; question: string; ranked: boolean };

function llmFor(deps: Pick<Deps, "engines">, provider: Exclude<AskProvider, "extractive">): Llm {
  if (provider === "llama_cpp") return deps.engines.llm;
  if (!deps.engines.remoteLlm) {
    throw new ApiError("invalid_request", "The openai_compatible provider is not configured on this server (PARLEY_OPENAI_BASE_URL and PARLEY_OPENAI_MODEL).", {
      param: "provider",
    });
  }
  return deps.engines.remoteLlm;
}

/** Any failure of the model itself is 502 model_failure: the user message is kept and the caller may retry. */
export function modelFailure(provider: AskProvider, err: unknown): ApiError {
  return new ApiError("model_failure", `The ${provider} model failed to answer: ${(err as Error)?.message ?? String(err)}`);
}

async function countMessages(llm: Llm, messages: ChatMessage[]): Promise<number> {
  let total = 0;
  for (const m of messages) total += (await llm.countTokens(m.content)) + 4; // a few tokens of chat framing per message
  return total;
}

/**
 * Fits the turn into the model's context window: the oldest turns go first, then (for
 * retrieval) the lowest-ranked passages. A whole transcript that does not fit on its
 * own is 413 transcript_too_large. Runs before the user message is stored.
 */
export async function prepareTurn(
  deps: Pick<Deps, "engines">,
  provider: AskProvider,
  input: { passages: Passage[]; history: ChatMessage[]; question: string; wholeTranscript: boolean },
): Promise<PreparedTurn> {
  const { question, wholeTranscript } = input;
  if (provider === "extractive") return { provider, llm: null, messages: [], passages: input.passages, question, ranked: !wholeTranscript };
  const llm = llmFor(deps, provider);
  let history = input.history;
  let passages = input.passages;
  try {
    const budget = (await llm.contextTokens()) - ANSWER_TOKENS;
    let messages = buildPrompt(passages, history, question);
    while ((await countMessages(llm, messages)) > budget) {
      if (history.length > 0) history = history.slice(2);
      else if (!wholeTranscript && passages.length > 0) passages = passages.slice(0, -1);
      else if (wholeTranscript) {
        throw new ApiError(
          "transcript_too_large",
          `The recording's transcript does not fit the ${provider} model's context window of ${budget + ANSWER_TOKENS} tokens.`,
        );
      } else break;
      messages = buildPrompt(passages, history, question);
    }
    return { provider, llm, messages, passages, question, ranked: true };
  } catch (err) {
    throw err instanceof ApiError ? err : modelFailure(provider, err);
  }
}

/** Runs a prepared turn; model errors become 502 model_failure. */
export async function runTurn(turn: PreparedTurn): Promise<Answer> {
  if (!turn.llm) {
    return {
      text: extractiveAnswer(turn.question, turn.passages, turn.ranked),
      tokens: { input: 0, output: 0, cached: 0 },
      model: "extractive",
      provider: "extractive",
      finishReason: "stop",
    };
  }
  try {
    const completion = await turn.llm.complete({ messages: turn.messages, maxTokens: ANSWER_TOKENS, temperature: 0.2, interactive: true });
    return { text: completion.text, tokens: completion.tokens, model: turn.llm.model, provider: turn.provider, finishReason: completion.finishReason };
  } catch (err) {
    throw modelFailure(turn.provider, err);
  }
}
