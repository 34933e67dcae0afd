import { describe, expect, test } from "bun:test";
import { ensureTestModels } from "../../scripts/test-models/cache";
import { nativeWhisperStatus } from "../../src/engines/whisper-native-build";
import { openNativeWhisper } from "../../src/engines/whisper-native";
import { openPrebuiltWhisper } from "../../src/engines/whisper-prebuilt";
import { byteCount, PROMPT_TOKENS, vocabularyPrompt } from "../../src/engines/whisper-prompt";
import { DEFAULT_DECODING, type WhisperRunner } from "../../src/engines/whisper-runner";
import { WhisperTranscriber } from "../../src/engines/whisper-transcriber";
import { voicedBurst } from "./signals";

const models = ensureTestModels();
const greedy = { ...DEFAULT_DECODING, temperatureInc: 0, threads: 2, language: "en" };
const native = nativeWhisperStatus();

/**
 * Terms the generated model's vocabulary holds as single tokens: it has " w" + the id in base
 * 36 for every text token, and whisper.cpp's tokenizer splits letters from digits, so ids
 * written in letters only ("wabc" is token 13368) make one token each.
 */
const TERMS = ["wabc", "wxyz", "wqrs", "wmed", "wkey"];
const lettersOnly = (n: number) => Array.from({ length: n }, (_, i) => `w${(i + 10_000).toString(36).replace(/\d/g, (d) => "abcdefghij"[Number(d)]!)}`);

const text = async (runner: WhisperRunner, pcm: Float32Array, prompt?: string) =>
  (await runner.transcribe(pcm, { ...greedy, prompt }).promise).segments.map((s) => s.text).join("|");

describe("the vocabulary prompt within Whisper's budget", () => {
  test("most important terms are kept first; the prompt lists them most important last, after a space", () => {
    const words = (t: string) => t.trim().split(/,\s*/).length;
    const count = (t: string) => (t.trim() ? words(t) : 0); // one token a term
    expect(vocabularyPrompt(["Metformin", "Acme", "Dr Quill"], count, 2)).toBe(" Acme, Metformin");
    expect(vocabularyPrompt([], count)).toBe("");
    // A term that does not fit is skipped; a later one that does is kept.
    expect(vocabularyPrompt(["a".repeat(40), "b"], byteCount, 10)).toBe(" b");
  });

  test("without the model's tokenizer, the UTF-8 byte count is never below the token count", () => {
    expect(byteCount(" Metformin, Æsculap")).toBe(20);
    expect(PROMPT_TOKENS).toBe(223);
  });
});

describe("the prompt reaches the decoder", () => {
  test.if(native.usable)("Parley's addon counts with the model's tokenizer, and fills the budget to the token", async () => {
    const runner = (await openNativeWhisper(models.whisper))!;
    expect(runner.countTokens!(" wabc, wxyz")).toBe(2); // "," is no token of this vocabulary
    const many = lettersOnly(300);
    const prompt = vocabularyPrompt(many, runner.countTokens!);
    expect(runner.countTokens!(prompt)).toBe(PROMPT_TOKENS);
    // The first 223 terms, the most important, and none after them.
    expect(prompt.trim().split(", ").reverse()).toEqual(many.slice(0, PROMPT_TOKENS));
  });

  test.if(native.usable)("Parley's addon: the same audio decodes otherwise with the prompt, and the same again without it", async () => {
    const runner = (await openNativeWhisper(models.whisper))!;
    const pcm = voicedBurst(3, 0, 3);
    const plain = await text(runner, pcm);
    const prompted = await text(runner, pcm, vocabularyPrompt(TERMS, runner.countTokens!));
    expect(prompted).not.toBe(plain);
    expect(await text(runner, pcm)).toBe(plain); // greedy decoding is deterministic: the prompt made the change
    expect(await text(runner, pcm, vocabularyPrompt(TERMS, runner.countTokens!))).toBe(prompted);
  });

  test("the prebuilt portable build: the prompt changes the decode too", async () => {
    const runner = await openPrebuiltWhisper("cpu", models.whisper);
    const pcm = voicedBurst(3, 0, 3);
    const plain = await text(runner, pcm);
    expect(await text(runner, pcm, vocabularyPrompt(TERMS, byteCount))).not.toBe(plain);
    expect(await text(runner, pcm)).toBe(plain);
  });

  test("WhisperTranscriber turns a vocabulary into the prompt of its build", async () => {
    const t = new WhisperTranscriber({ model: "tiny", path: models.whisper, gpu: "off", threads: 2, decoding: { temperatureInc: 0 } });
    const pcm = voicedBurst(3, 0, 3);
    const runner = await t.load();
    const expected = await text(runner, pcm, vocabularyPrompt(TERMS, runner.countTokens ?? byteCount));
    const got = (await t.transcribe(pcm, { language: "en", vocabulary: TERMS })).segments.map((s) => s.text).join("|");
    expect(got).toBe(expected);
    expect(got).not.toBe((await t.transcribe(pcm, { language: "en" })).segments.map((s) => s.text).join("|"));
  });
});
