// bench/summary.ts: where a summary's time goes (issue 30, decision 207), on the
// Qwen2.5-1.5B-shaped stand-in (random weights, Q4_K_M; scripts/test-models) with the threads
// LlamaLlm picks (2 on a 2-core box), for the transcript of a conversation-like clip (the
// lines bench/live.ts speaks, two speakers taking turns, 35% pauses). It prints:
// - the prompt's evaluation: tokens (the stand-in's tokenizer, and the characters), seconds, tok/s;
// - generation under the template's grammar: tokens, seconds, tok/s (over --gen-tokens: the
//   stand-in's random weights write until the answer's budget, which no real model does), and
//   without the grammar (the model's own rate, which a model whose tokens it accepts approaches);
// - the summary call at completion, cold (the whole prompt) and warm (the prompt evaluated
//   while the recording streamed, decision 206: only the last --tail-seconds of transcript
//   remain), each with generation at the job's budget and at a real summary's length;
// - those figures for the same transcript counted in a real BPE tokenizer's tokens (chars / 4,
//   an estimate), which is what a real Qwen2.5-1.5B would evaluate and write.
// The stand-in's vocabulary has few whole words, so its tokens are nearly characters: a
// 10-minute transcript does not fit its summary budget and is map-reduced, which a real
// tokenizer's would not be; hence --minutes 2 by default, extrapolated to 10 (said so).
// Usage: bun bench/summary.ts [--minutes 2] [--gen-tokens 48] [--tail-seconds 30] [--same]
// --same also runs the call cold and warm to --gen-tokens and says whether both wrote the same text.
import { loadavg } from "node:os";
import { parseArgs } from "node:util";
import { ensureShapedGguf } from "../scripts/test-models/cache";
import { LlamaLlm } from "../src/engines/llama-llm";
import { summaryMessages, summaryRoom, transcriptLines } from "../src/modules/summaries/generate";
import { TEMPLATES } from "../src/modules/summaries/templates";
import type { Segment } from "../src/modules/transcriptions/schema";
import { LINES } from "./support/conversation";

const { values: flags } = parseArgs({
  options: {
    minutes: { type: "string", default: "2" },
    "gen-tokens": { type: "string", default: "48" },
    "tail-seconds": { type: "string", default: "30" },
    same: { type: "boolean", default: false },
  },
});
const minutes = Number(flags.minutes);
const genTokens = Number(flags["gen-tokens"]);
const tailSeconds = Number(flags["tail-seconds"]);
/** A real BPE tokenizer's characters per token on English text (Qwen2.5's is about 4): an estimate, printed as one. */
const CHARS_PER_REAL_TOKEN = 4;
/** The short run of the generation rate's two. */
const SHORT_TOKENS = 8;
/** espeak-ng's default rate, about 175 words a minute. */
const CHARS_PER_SPOKEN_SECOND = 14.5;
const load = () => `load ${loadavg()[0]!.toFixed(2)}`;
const sec = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/**
 * What a real model's summary of this clinic conversation in the general template looks like:
 * a title, three summary sentences, five key points, two decisions, three action items, each
 * with its citations. Its length in tokens is the realistic answer length the figures use.
 */
const REALISTIC_ANSWER = JSON.stringify({
  title: "Knee pain follow-up and a plan to restart exercises",
  summary: [
    { text: "The patient's knee has bothered them again since last week, mostly on stairs and in the evening.", segments: [2, 4] },
    { text: "They had stopped the exercises agreed in March once the knee felt better.", segments: [5, 6] },
    { text: "The doctor asked them to restart the exercises and planned an ultrasound if it does not improve.", segments: [11, 15] },
  ],
  key_points: [
    { text: "Pain is worse on stairs and a little in the evening after work.", segments: [4] },
    { text: "The knee clicks when straightened, which alone is not a worry.", segments: [8, 9] },
    { text: "There was some swelling on Monday after a long walk.", segments: [10] },
    { text: "Ibuprofen after meals for a week is fine, at most three a day.", segments: [13] },
    { text: "Short runs on flat ground are allowed if the pain does not return.", segments: [17] },
  ],
  decisions: [
    { text: "Restart the exercises twice a day.", segments: [11] },
    { text: "Book an ultrasound and see the physiotherapist if there is no improvement by month end.", segments: [14, 15] },
  ],
  action_items: [
    { text: "Patient: do the exercises twice a day.", segments: [11] },
    { text: "Patient: book the next visit in four weeks at the front desk.", segments: [18, 19] },
    { text: "Patient: keep a diary of how the knee feels each day.", segments: [19] },
  ],
});

/** The clip's transcript: turns of one or two lines, the speakers alternating, paused so that 35% of the time is silence. */
function conversationSegments(minutes: number): Segment[] {
  const segments: Segment[] = [];
  let t = 0;
  for (let turn = 0, line = 0; t < minutes * 60; turn++) {
    const speaker = `SPEAKER_${(turn % 2) + 1}`;
    const spoken = turn % 5 === 2 ? 2 : 1;
    let said = 0;
    for (let k = 0; k < spoken; k++, line++) {
      const text = LINES[line % LINES.length]!;
      const seconds = text.length / CHARS_PER_SPOKEN_SECOND;
      segments.push({ start: t, end: t + seconds, text, speaker, confidence: 0.9 });
      t += seconds;
      said += seconds;
    }
    t += (said * 0.35) / 0.65;
  }
  return segments;
}

async function main() {
  const llm = new LlamaLlm({ model: "qwen2.5-1.5b-shape", path: ensureShapedGguf(), gpu: "off" });
  const { context } = await llm.load();
  const template = TEMPLATES.general;
  const segments = conversationSegments(minutes);
  const transcript = transcriptLines(segments).join("\n");
  const messages = summaryMessages(template.prompt, transcript);
  const room = await summaryRoom(llm, template, segments.length);
  const transcriptTokens = await llm.countTokens(transcript);
  const promptChars = template.prompt.length + transcript.length;
  const realisticTokens = await llm.countTokens(REALISTIC_ANSWER);
  const realisticReal = Math.round(REALISTIC_ANSWER.length / CHARS_PER_REAL_TOKEN);
  console.log(
    `transcript: ${minutes} min conversation, ${segments.length} segments, ${transcript.length} chars = ${transcriptTokens} stand-in tokens (${(transcript.length / transcriptTokens).toFixed(2)} chars/token; a real tokenizer ~${CHARS_PER_REAL_TOKEN}); template ${template.name}; ${context.currentThreads} threads; context ${context.contextSize}`,
  );
  if (transcriptTokens > room.budget) {
    console.log(`the transcript (${transcriptTokens} tokens) is over the summary budget (${room.budget}): it would be map-reduced; use fewer --minutes`);
    return;
  }
  // Something else on the sequence first, so nothing of the prompt is held.
  await llm.complete({ messages: [{ role: "user", content: "unrelated" }], maxTokens: 1 });

  let t0 = performance.now();
  const cold = await llm.prefill(messages);
  const promptMs = performance.now() - t0;
  const promptRate = (cold.evaluated / promptMs) * 1000;
  console.log(`prompt evaluation (cold): ${cold.evaluated} tokens in ${sec(promptMs)} = ${promptRate.toFixed(1)} tok/s, ${load()}`);

  // The prompt is held (all but its last token): these calls' time is generation. The rate is
  // the difference of a short and a long run, so the grammar's setup and the first token cancel out.
  const schema = (await summaryRoom(llm, template, segments.length)).schema;
  const generate = async (maxTokens: number, jsonSchema: object | undefined = schema) => {
    const t = performance.now();
    const out = await llm.complete({ messages, jsonSchema, maxTokens, temperature: 0 });
    return { tokens: out.tokens.output, ms: performance.now() - t };
  };
  const short = await generate(SHORT_TOKENS);
  const long = await generate(genTokens);
  const genRate = ((long.tokens - short.tokens) / (long.ms - short.ms)) * 1000;
  console.log(
    `generation (grammar of the cited general schema): ${long.tokens - short.tokens} tokens (${short.tokens}..${long.tokens}) in ${sec(long.ms - short.ms)} = ${genRate.toFixed(2)} tok/s; the first ${short.tokens} with the grammar's setup ${sec(short.ms)}, ${load()}`,
  );

  // Warm (decision 206): the stream's transcript but its last tailSeconds was evaluated while it streamed.
  await llm.complete({ messages: [{ role: "user", content: "unrelated" }], maxTokens: 1 });
  const streamedUntil = segments.at(-1)!.end - tailSeconds;
  const early = segments.filter((s) => s.end <= streamedUntil);
  await llm.prefill(summaryMessages(template.prompt, `${transcriptLines(early).join("\n")}\n`));
  t0 = performance.now();
  const tail = await llm.prefill(messages);
  const tailMs = performance.now() - t0;
  console.log(
    `prompt at completion (warm, last ${tailSeconds} s of transcript left): ${tail.evaluated} tokens evaluated in ${sec(tailMs)}, ${tail.reused} reused, ${load()}`,
  );

  // An answer of `tokens`: the grammar's setup and first tokens as measured, the rest at the rate.
  // Without the grammar: the model's own rate, which a real model (whose tokens the grammar
  // accepts) approaches; random weights keep proposing tokens it rejects (decision 101).
  const free = [await generate(SHORT_TOKENS, undefined), await generate(genTokens, undefined)] as const;
  const freeRate = ((free[1].tokens - free[0].tokens) / (free[1].ms - free[0].ms)) * 1000;
  console.log(`generation without the grammar: ${freeRate.toFixed(2)} tok/s over ${free[1].tokens - free[0].tokens} tokens, ${load()}`);
  const atFree = (tokens: number) => short.ms + ((tokens - short.tokens) / freeRate) * 1000;
  const at = (tokens: number) => short.ms + ((tokens - short.tokens) / genRate) * 1000;
  const row = (label: string, prompt: number, answer: number, answerTokens: string) =>
    `  ${label}: prompt ${sec(prompt)} + generation ${sec(answer)} (${answerTokens}) = ${sec(prompt + answer)}`;
  console.log(`summary call at completion, ${minutes} min, stand-in tokens (measured rates):`);
  console.log(row("cold, job's budget", promptMs, at(room.outputTokens), `${room.outputTokens} tokens: random weights write until it`));
  console.log(row("cold, real answer length", promptMs, at(realisticTokens), `${realisticTokens} tokens: a real summary of this template, below`));
  console.log(row("warm, real answer length", tailMs, at(realisticTokens), `${realisticTokens} tokens`));

  // A real tokenizer's counts at the measured rates; the prompt grows with the transcript (x 10 / minutes for 10 min).
  const scale = 10 / minutes;
  const realPrompt10 = (template.prompt.length + transcript.length * scale) / CHARS_PER_REAL_TOKEN;
  const realTail = tail.evaluated * (transcript.length / transcriptTokens / CHARS_PER_REAL_TOKEN);
  console.log(
    `extrapolated to 10 min with a real tokenizer (~${CHARS_PER_REAL_TOKEN} chars/token, estimate; prompt rate as measured at ${minutes} min, optimistic: attention grows with the prompt):`,
  );
  console.log(row("cold", (realPrompt10 / promptRate) * 1000, at(realisticReal), `~${realisticReal} tokens of the realistic answer`));
  console.log(row("warm", (realTail / promptRate) * 1000, at(realisticReal), `~${realisticReal} tokens`));
  console.log(row("warm, at the rate without the grammar", (realTail / promptRate) * 1000, atFree(realisticReal), `~${realisticReal} tokens`));
  console.log(`(the prompt: ${promptChars} chars at ${minutes} min; the realistic answer: ${REALISTIC_ANSWER.length} chars)`);

  if (flags.same) {
    await llm.complete({ messages: [{ role: "user", content: "unrelated" }], maxTokens: 1 });
    const coldAnswer = await llm.complete({ messages, jsonSchema: schema, maxTokens: genTokens, temperature: 0 });
    await llm.complete({ messages: [{ role: "user", content: "unrelated" }], maxTokens: 1 });
    await llm.prefill(summaryMessages(template.prompt, `${transcriptLines(early).join("\n")}\n`));
    const warmAnswer = await llm.complete({ messages, jsonSchema: schema, maxTokens: genTokens, temperature: 0 });
    console.log(
      `same answer cold and warm (${genTokens} tokens): ${coldAnswer.text === warmAnswer.text} (warm cached ${warmAnswer.tokens.cached} of ${warmAnswer.tokens.input})`,
    );
  }
}

await main();
