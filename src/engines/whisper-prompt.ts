/**
 * Whisper's prompt is at most half its text context: n_text_ctx / 2 = 224 tokens in every
 * published model, one of them the marker whisper.cpp puts before it. Terms beyond it would
 * be cut from the front by whisper.cpp itself (decision 158).
 */
export const PROMPT_TOKENS = 223;

/**
 * A safe count where the model's tokenizer is not exposed (the prebuilt builds): Whisper's
 * byte-level BPE never makes more tokens than the text has UTF-8 bytes.
 */
export const byteCount = (text: string) => new TextEncoder().encode(text).length;

/** How terms are joined: the way a list of names reads in speech, which the decoder continues. */
const SEPARATOR = ", ";

/**
 * The initial prompt for a vocabulary, most important term first: each term in turn is kept
 * when the prompt with it still fits the budget, counted by `count` (the model's tokenizer
 * where there is one). The prompt lists the kept terms most important last, nearest the
 * audio's own text, so even a count that was wrong loses the least important ones first
 * (whisper.cpp keeps the end of a prompt that is too long). It starts with a space, as
 * OpenAI's whisper encodes a prompt: words inside text are tokens with their space. Empty
 * for no terms.
 */
export function vocabularyPrompt(terms: readonly string[], count: (text: string) => number, budget = PROMPT_TOKENS): string {
  const kept: string[] = [];
  for (const term of terms) if (count(` ${[term, ...kept].join(SEPARATOR)}`) <= budget) kept.unshift(term);
  return kept.length ? ` ${kept.join(SEPARATOR)}` : "";
}
