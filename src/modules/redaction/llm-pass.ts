import { answerRoom, chunkLines, FRAMING_TOKENS, type RunControl } from "../../engines/llm-budget";
import { type Completion, type Llm, stripReasoning } from "../../engines/llm";
import { type FoundIdentifier, PII_KINDS, type PiiKind, verbatimMatches } from "./detect";

/** A pass that could not finish: its message is stored with the pass and logged. */
export class LlmPassFailure extends Error {}

const MAX_ITEMS = 32;
/** Longer than any name, date, address or number: a model cannot make us redact a sentence. */
const MAX_LENGTH = 60;
const MAX_WORDS = 8;

const PROMPT = `You find personal identifiers in a part of a transcript, for redaction.
List each person's name, date of birth, phone number, email address, street address, medical record, patient, case, chart, docket or insurance number, IBAN and payment card number that appears in the text.
Copy each exactly as it is written in the text, character for character. List nothing that is not in the text, and no ordinary words, times, amounts or medical terms.
Kinds: name, date_of_birth, phone, email, address, record_number, iban, card_number.`;

/** The answer's shape, bounded so the grammar (llama.cpp) can never produce more than the room kept for it. */
export const IDENTIFIERS_SCHEMA = {
  type: "object",
  properties: {
    identifiers: {
      type: "array",
      maxItems: MAX_ITEMS,
      items: { type: "object", properties: { kind: { enum: [...PII_KINDS] }, text: { type: "string", maxLength: MAX_LENGTH } }, required: ["kind", "text"] },
    },
  },
  required: ["identifiers"],
};

const LONGEST_ANSWER = JSON.stringify({
  identifiers: Array.from({ length: MAX_ITEMS }, () => ({ kind: "record_number", text: "Ada Lovelace, 12 Baker Street ".repeat(2).slice(0, MAX_LENGTH) })),
});

/**
 * Whether a string the model gave may be redacted: it stands in the text it was given
 * (verbatim, as whole words), is short, and has a capital or a digit, as every kind the
 * rules know does in a transcript. So an invented string, a sentence, or a common word
 * ("the", which would blank the text) is dropped.
 */
function acceptable(candidate: string, chunk: string): boolean {
  const value = candidate.trim();
  if (value.length < 2 || value.length > MAX_LENGTH || value.split(/\s+/).length > MAX_WORDS || value.includes("\n")) return false;
  if (!/[\p{Lu}\p{N}]/u.test(value)) return false;
  return verbatimMatches(chunk, value).length > 0;
}

/** A complete `{"kind": ..., "text": ...}` item, as the grammar writes it. */
const ITEM = /\{\s*"kind"\s*:\s*"([a-z_]+)"\s*,\s*"text"\s*:\s*("(?:[^"\\]|\\.)*")\s*\}/g;

/**
 * The listed items. An answer cut off at maxTokens (the grammar bounds items and lengths,
 * not the whitespace or the multi-token characters between them) keeps its complete items.
 */
function parseAnswer(completion: Completion): { kind: unknown; text: unknown }[] {
  const answer = stripReasoning(completion.text);
  try {
    const parsed = JSON.parse(answer.slice(answer.indexOf("{"), answer.lastIndexOf("}") + 1));
    return Array.isArray(parsed?.identifiers) ? parsed.identifiers : [];
  } catch {
    if (completion.finishReason !== "length") throw new LlmPassFailure("The model's answer was not valid JSON.");
    return [...answer.matchAll(ITEM)].map((m) => ({ kind: m[1], text: JSON.parse(m[2]!) }));
  }
}

/**
 * Asks the model, part by part, for the identifiers in these lines (a transcript's segments),
 * and keeps only those that pass `acceptable`: the model can add redactions of strings that
 * are there, never invent one. Duplicates are given once.
 */
export async function findIdentifiersWithLlm(llm: Llm, lines: string[], run: RunControl): Promise<FoundIdentifier[]> {
  const context = await llm.contextTokens();
  const outputTokens = await answerRoom(llm, LONGEST_ANSWER, context);
  const budget = context - outputTokens - FRAMING_TOKENS - (await llm.countTokens(PROMPT));
  if (budget < 32) throw new LlmPassFailure(`The model's context (${context} tokens) is too small for the redaction pass.`);
  const found = new Map<string, FoundIdentifier>();
  for (const chunk of await chunkLines(
    llm,
    lines.filter((l) => l.trim()),
    budget,
  )) {
    const completion = await llm.complete({
      messages: [
        { role: "system", content: PROMPT },
        { role: "user", content: chunk },
      ],
      jsonSchema: IDENTIFIERS_SCHEMA,
      maxTokens: outputTokens,
      temperature: 0,
      signal: run.signal,
      excludeWait: run.excludeWait,
    });
    for (const item of parseAnswer(completion)) {
      if (typeof item?.text !== "string" || !PII_KINDS.includes(item.kind as PiiKind)) continue;
      const text = item.text.trim();
      if (acceptable(text, chunk)) found.set(`${item.kind}\u0000${text}`, { kind: item.kind as PiiKind, text });
    }
  }
  return [...found.values()];
}
