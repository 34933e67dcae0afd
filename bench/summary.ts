// bench/summary.ts: where a summary's time goes (issue 30, decisions 207 and 213), on the
// Qwen2.5-1.5B-shaped stand-in (random weights, Q4_K_M, English word pieces so a text is as
// many tokens as with Qwen2.5's tokenizer; scripts/test-models) with the threads LlamaLlm
// picks, for the transcript of a conversation-like clip (the lines bench/live.ts speaks, two
// speakers taking turns, 35% pauses). The summary call at completion, measured end to end:
// - cold: the whole prompt evaluated, then an answer under the template's grammar, cut at a
//   real summary's length (random weights may write to the job's budget, which no real model
//   does, or close the JSON sooner: then a real summary's length at the measured rate, said so);
// - warm (decision 206): the prompt but its last --tail-seconds evaluated while the recording
//   streamed, then the same answer.
// Each part is printed with its tokens, seconds, rate, threads and load average; last, the warm
// answer's length without the grammar, for the grammar's share of the answer's time.
// Usage: bun bench/summary.ts [--minutes 10] [--tail-seconds 30] [--answer-tokens N] [--same]
//          [--quant q4_k_m,q4_0] [--skip cold,free]
// --same also says whether the cold and the warm call wrote the same text. --quant: the files of
// the model to measure, one after the other in this run (Qwen publishes both; decision 233), then
// the warm calls' ratio; --skip leaves out the cold call or the answer without the grammar.
import { loadavg } from "node:os";
import { parseArgs } from "node:util";
import { ensureShapedGguf } from "../scripts/test-models/cache";
import { LlamaLlm } from "../src/engines/llama-llm";
import type { Prefilled } from "../src/engines/llm";
import { summaryMessages, summaryRoom, transcriptLines } from "../src/modules/summaries/generate";
import { TEMPLATES } from "../src/modules/summaries/templates";
import type { Segment } from "../src/modules/transcriptions/schema";
import { LINES } from "./support/conversation";

const { values: flags } = parseArgs({
  options: {
    minutes: { type: "string", default: "10" },
    "tail-seconds": { type: "string", default: "30" },
    "answer-tokens": { type: "string" },
    same: { type: "boolean", default: false },
    quant: { type: "string", default: "q4_k_m,q4_0" },
    skip: { type: "string", default: "" },
  },
});
const minutes = Number(flags.minutes);
const tailSeconds = Number(flags["tail-seconds"]);
const skip = new Set(flags.skip!.split(",").filter(Boolean));
const QUANTS = { q4_k_m: "qwen2.5-1.5b-q4_k_m", q4_0: "qwen2.5-1.5b-q4_0" } as const;
const quants = flags.quant!.split(",").filter(Boolean) as (keyof typeof QUANTS)[];
for (const q of quants) if (!(q in QUANTS)) throw new Error(`--quant: ${q} is none of ${Object.keys(QUANTS).join(", ")}`);
/** espeak-ng's default rate, about 175 words a minute. */
const CHARS_PER_SPOKEN_SECOND = 14.5;
const load = () => `load ${loadavg()[0]!.toFixed(2)}`;
const sec = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/**
 * What a real model's summary of this clinic conversation in the general template looks like:
 * a title, three summary sentences, five key points, two decisions, three action items, each
 * with its citations, as the cited schema writes them (decision 232: one array per statement,
 * the sentence then its segments). Its length in tokens is the realistic answer length the
 * figures use.
 */
const REALISTIC = {
  title: "Knee pain follow-up and a plan to restart exercises",
  summary: [
    ["The patient's knee has bothered them again since last week, mostly on stairs and in the evening.", 2, 4],
    ["They had stopped the exercises agreed in March once the knee felt better.", 5, 6],
    ["The doctor asked them to restart the exercises and planned an ultrasound if it does not improve.", 11, 15],
  ],
  key_points: [
    ["Pain is worse on stairs and a little in the evening after work.", 4],
    ["The knee clicks when straightened, which alone is not a worry.", 8, 9],
    ["There was some swelling on Monday after a long walk.", 10],
    ["Ibuprofen after meals for a week is fine, at most three a day.", 13],
    ["Short runs on flat ground are allowed if the pain does not return.", 17],
  ],
  decisions: [
    ["Restart the exercises twice a day.", 11],
    ["Book an ultrasound and see the physiotherapist if there is no improvement by month end.", 14, 15],
  ],
  action_items: [
    ["Patient: do the exercises twice a day.", 11],
    ["Patient: book the next visit in four weeks at the front desk.", 18, 19],
    ["Patient: keep a diary of how the knee feels each day.", 19],
  ],
};
const REALISTIC_ANSWER = JSON.stringify(REALISTIC);
/** The same summary as the v2 prompts had it written, an object per statement (decision 159), for the difference. */
const REALISTIC_V2 = JSON.stringify(
  Object.fromEntries(Object.entries(REALISTIC).map(([k, v]) => [k, Array.isArray(v) ? v.map(([text, ...segments]) => ({ text, segments })) : v])),
);

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

/** The summary call on one file of the model: the warm call at completion with a real summary's answer, in ms (null when not measured). */
async function measure(quant: keyof typeof QUANTS): Promise<number | null> {
  const llm = new LlamaLlm({ model: QUANTS[quant], path: ensureShapedGguf(QUANTS[quant]), gpu: "off" });
  const { context } = await llm.load();
  const template = TEMPLATES.general;
  const segments = conversationSegments(minutes);
  const transcript = transcriptLines(segments).join("\n");
  const messages = summaryMessages(template.prompt, transcript);
  const room = await summaryRoom(llm, template, segments.length);
  const transcriptTokens = await llm.countTokens(transcript);
  const answerTokens = Number(flags["answer-tokens"] ?? (await llm.countTokens(REALISTIC_ANSWER)));
  console.log(
    `${quant}: transcript: ${minutes} min conversation, ${segments.length} segments, ${transcript.length} chars = ${transcriptTokens} tokens (${(transcript.length / transcriptTokens).toFixed(2)} chars/token); template ${template.name} (${room.templateTokens} tokens); summary budget ${room.budget}; context ${context.contextSize}; answer ${answerTokens} tokens (a real summary's length, ${REALISTIC_ANSWER.length} chars; ${await llm.countTokens(REALISTIC_V2)} tokens as v2's objects)`,
  );
  if (transcriptTokens > room.budget) {
    console.log(`the transcript is over the summary budget: the job would map-reduce it; not measured`);
    return null;
  }
  const schema = room.schema;
  const elsewhere = () => llm.complete({ messages: [{ role: "user", content: "unrelated" }], maxTokens: 1 });
  const timed = async <T>(work: () => Promise<T>) => {
    const t = performance.now();
    const out = await work();
    return { out, ms: performance.now() - t, threads: context.currentThreads, load: load() };
  };
  const answer = () => timed(() => llm.complete({ messages, jsonSchema: schema, maxTokens: answerTokens, temperature: 0 }));
  const report = (label: string, prompt: Awaited<ReturnType<typeof timed<Prefilled>>>, gen: Awaited<ReturnType<typeof answer>>) => {
    console.log(
      `${label}: prompt ${prompt.out.evaluated} tokens evaluated (${prompt.out.reused} reused) in ${sec(prompt.ms)} = ${((prompt.out.evaluated / prompt.ms) * 1000).toFixed(1)} tok/s, ${prompt.threads} threads, ${prompt.load}`,
    );
    console.log(
      `  answer: ${gen.out.tokens.output} tokens under the grammar in ${sec(gen.ms)} = ${((gen.out.tokens.output / gen.ms) * 1000).toFixed(2)} tok/s, ${gen.threads} threads, ${gen.load}`,
    );
    // Random weights close the JSON when they happen to: the answer at a real summary's length is then the measured rate's.
    const real = gen.out.tokens.output >= answerTokens ? gen.ms : (answerTokens / gen.out.tokens.output) * gen.ms;
    const how = gen.out.tokens.output >= answerTokens ? "measured" : `its ${answerTokens} tokens at the rate measured over ${gen.out.tokens.output}`;
    console.log(
      `  the call at completion: ${sec(prompt.ms + gen.ms)} as run; with a real summary's answer (${how}): ${sec(prompt.ms + real)} (target 45 s from upload-complete, which also waits for the transcription)`,
    );
    return prompt.ms + real;
  };

  // Cold: something else on the sequence first, so nothing of the prompt is held.
  const cold = skip.has("cold")
    ? null
    : await (async () => {
        await elsewhere();
        const coldPrompt = await timed(() => llm.prefill(messages));
        const coldAnswer = await answer();
        report(`cold, ${minutes} min`, coldPrompt, coldAnswer);
        return coldAnswer;
      })();

  // Warm (decision 206): the stream's transcript but its last tailSeconds was evaluated while it streamed.
  await elsewhere();
  const streamedUntil = segments.at(-1)!.end - tailSeconds;
  const early = segments.filter((s) => s.end <= streamedUntil);
  await llm.prefill(summaryMessages(template.prompt, `${transcriptLines(early).join("\n")}\n`));
  const warmPrompt = await timed(() => llm.prefill(messages));
  const warmAnswer = await answer();
  const warmCall = report(`warm, ${minutes} min, last ${tailSeconds} s of transcript left`, warmPrompt, warmAnswer);
  if (flags.same && cold) console.log(`same answer cold and warm: ${cold.out.text === warmAnswer.out.text}`);

  // The grammar's share of the answer: node-llama-cpp checks the grammar against the token the
  // model chose and applies it to the whole vocabulary only when that token breaks it. Random
  // weights break it at almost every step, a trained model seldom: its answer runs between the
  // two rates, nearer this one (the prompt is still held, so only the answer is timed).
  if (skip.has("free")) return warmCall;
  const free = await timed(() => llm.complete({ messages, maxTokens: answerTokens, temperature: 0 }));
  const freeRate = free.out.tokens.output / free.ms;
  console.log(
    `  without the grammar: ${free.out.tokens.output} tokens in ${sec(free.ms)} = ${(freeRate * 1000).toFixed(2)} tok/s, ${free.threads} threads, ${free.load}; the warm call with a real summary's answer at this rate: ${sec(warmPrompt.ms + answerTokens / freeRate)} (the bound a model that never breaks the grammar approaches; not a measurement of one)`,
  );
  return warmCall;
}

const warm: [string, number | null][] = [];
for (const q of quants) warm.push([q, await measure(q)]);
const [base, ...others] = warm;
for (const [q, ms] of others)
  if (base?.[1] && ms)
    console.log(
      `warm call with a real summary's answer: ${q} ${sec(ms)} against ${base[0]} ${sec(base[1])} in this run: ${(base[1] / ms).toFixed(2)}x as fast`,
    );
