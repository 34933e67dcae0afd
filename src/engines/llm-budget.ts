import type { ExcludeWait } from "./turns";
import type { Llm } from "./llm";

/** Tokens kept free for the chat template's own framing around system and user text. */
export const FRAMING_TOKENS = 64;

/** A model job's abort signal and its way of leaving the wait for the engine out of its time limit. */
export type RunControl = { signal: AbortSignal; excludeWait?: ExcludeWait };

/**
 * Room kept for an answer: its longest form in this model's tokens, so input that fills the
 * rest of the context can never cut it off (a cut-off answer is not JSON). At most half the
 * context: a model too small for the longest answer and a useful input is given half.
 */
export async function answerRoom(llm: Llm, longestAnswer: string, context: number): Promise<number> {
  return Math.min(await llm.countTokens(longestAnswer), Math.floor(context / 2));
}

/** Packs lines into chunks of at most `budget` tokens; a single longer line is cut by characters. */
export async function chunkLines(llm: Llm, lines: string[], budget: number): Promise<string[]> {
  const chunks: string[] = [];
  let current: string[] = [];
  let used = 0;
  for (const line of lines) {
    const tokens = await llm.countTokens(line);
    if (tokens > budget) {
      const pieces = Math.ceil(tokens / budget);
      const size = Math.ceil(line.length / pieces);
      for (let i = 0; i < line.length; i += size) chunks.push(line.slice(i, i + size));
      continue;
    }
    if (used + tokens > budget && current.length) {
      chunks.push(current.join("\n"));
      current = [];
      used = 0;
    }
    current.push(line);
    used += tokens + 1;
  }
  if (current.length) chunks.push(current.join("\n"));
  return chunks;
}
