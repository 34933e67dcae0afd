import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { LlamaModel } from "node-llama-cpp";
import { writeGguf } from "../../scripts/test-models/gguf";
import { transcriptLines } from "../../src/modules/summaries/generate";
import { makeTempDir } from "../helpers";

/**
 * The Qwen2.5-shaped stand-in's tokenizer, loaded by llama.cpp from a vocabulary-only file
 * (decision 213): English should cost about as many tokens as with Qwen2.5's own tokenizer.
 * Qwen2's pre-tokenizer splits text into pieces that its BPE never merges across, so their
 * count is a lower bound of its token count, and about equal to it for common English words.
 */
const QWEN2_PRETOKENIZER =
  /'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD]|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+/gu;

/** A conversation the word list was not written for: a planning meeting. */
const SAID = [
  "Okay, let's get started. Everyone can hear me?",
  "Yes, loud and clear. Should we go over the budget first?",
  "Sure. We spent a bit more than planned on the new office chairs.",
  "How much more? I thought we had agreed on a limit in January.",
  "About fifteen percent over, mostly because of delivery costs.",
  "That's annoying, but I suppose we can take it from the travel money.",
  "Fine by me. Next thing: the website redesign is running late.",
  "The designer was sick for two weeks, so we lost some time there.",
  "Can we still launch before the conference at the end of April?",
  "If nobody adds new pages now, I think we'll make it.",
  "Then no new pages. Maria, could you tell the sales team?",
  "I'll send them an email this afternoon and copy you in.",
];

let model: LlamaModel;
beforeAll(async () => {
  const path = join(makeTempDir(), "vocab.gguf");
  writeGguf(path, { shape: "qwen2.5-1.5b-q4_k_m", vocabOnly: true });
  const { getLlama } = await import("node-llama-cpp");
  const llama = await getLlama({ gpu: false, build: "never", logLevel: "error" as never, progressLogs: false });
  model = await llama.loadModel({ modelPath: path, vocabOnly: true });
});
afterAll(() => model?.dispose());

const qwenPieces = (text: string) => text.match(QWEN2_PRETOKENIZER)!.length;

describe("the Qwen2.5-shaped stand-in's vocabulary", () => {
  test("spoken English is about 4 characters a token, as with a real tokenizer", () => {
    const prose = SAID.join(" ");
    const perToken = prose.length / model.tokenize(prose).length;
    expect(perToken).toBeGreaterThan(3.5);
    expect(perToken).toBeLessThan(4.5);
    expect(model.tokenize(prose).length).toBeGreaterThanOrEqual(qwenPieces(prose) * 0.95);
  });

  test("a summary's transcript lines cost about what Qwen2.5's tokenizer would make of them", () => {
    const segments = SAID.map((text, i) => ({ start: i * 5, speaker: `SPEAKER_${(i % 2) + 1}`, text }));
    const transcript = transcriptLines(segments).join("\n");
    const tokens = model.tokenize(transcript).length;
    // Qwen2.5 splits "SPEAKER" once or twice beyond its pieces: a few more tokens than pieces, not many.
    expect(tokens).toBeGreaterThanOrEqual(qwenPieces(transcript));
    expect(tokens).toBeLessThan(qwenPieces(transcript) * 1.2);
  });

  test("any text still tokenizes, through byte tokens where no piece fits, and reads back the same", () => {
    const odd = 'Zürich → 東京 {"a": [1, 2]} qwxzv\tend';
    expect(model.detokenize(model.tokenize(odd))).toBe(odd);
  });
});
