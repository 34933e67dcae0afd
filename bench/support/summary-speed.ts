import { getLlama, type LlamaGrammar, LlamaGrammarEvaluationState } from "node-llama-cpp";
import { LlamaLlm } from "../../src/engines/llama-llm";
import { TEMPLATES } from "../../src/modules/summaries/templates";

/**
 * Summary generation speed against node-llama-cpp's own bare loop on the same GGUF: ours is
 * the call a summary makes (LlamaLlm.complete: chat wrapper, the general template's JSON-schema
 * grammar, temperature 0); the bare loop tokenizes the same text and evaluates it with
 * sequence.evaluate, no chat wrapper, once with the same grammar (the like-for-like baseline:
 * what our wrapper costs) and once with none (what the grammar costs). Every side runs to
 * `short` and `long` output tokens and its rate is the difference: (tokens long - tokens short)
 * / (time long - time short), so the prompt's evaluation and fixed costs cancel out. Sides are
 * interleaved, `repetitions` times, and each rate is the median.
 */

const SYSTEM = "Summarise the meeting as JSON.";
const TRANSCRIPT = "[00:00] SPEAKER_1: the budget is a summary of the meeting";

export type Rate = { tokens: number; seconds: number; perSecond: number };
type Run = { tokens: number; ms: number };
type Side = (maxTokens: number) => Promise<Run>;

const rate = (a: Run, b: Run): Rate => {
  const tokens = b.tokens - a.tokens;
  const seconds = (b.ms - a.ms) / 1000;
  return { tokens, seconds, perSecond: tokens / seconds };
};
const median = (rates: Rate[]) => [...rates].sort((a, b) => a.perSecond - b.perSecond)[Math.floor(rates.length / 2)]!;

/** Ours: the summary's own call. */
function ours(llm: LlamaLlm): Side {
  const template = TEMPLATES.general;
  return async (maxTokens) => {
    const t0 = performance.now();
    const c = await llm.complete({
      messages: [
        { role: "system", content: SYSTEM },
        { role: "user", content: TRANSCRIPT },
      ],
      jsonSchema: template.schema,
      maxTokens,
      temperature: 0,
    });
    return { tokens: c.tokens.output, ms: performance.now() - t0 };
  };
}

/** The bare loops on their own model and a context of our context's size and threads. */
async function bare(path: string, contextSize: number, threads: number) {
  const llama = await getLlama({ gpu: false, build: "never", logLevel: "error" as never, progressLogs: false });
  const model = await llama.loadModel({ modelPath: path });
  const context = await model.createContext({ contextSize, sequences: 1, threads });
  const sequence = context.getSequence();
  const prompt = model.tokenize(`${SYSTEM}\n${TRANSCRIPT}`);
  const grammar = await llama.createGrammarForJsonSchema(TEMPLATES.general.schema as never);
  const loop =
    (constraint?: LlamaGrammar): Side =>
    async (maxTokens) => {
      await sequence.clearHistory();
      const grammarEvaluationState = constraint ? new LlamaGrammarEvaluationState({ model, grammar: constraint }) : undefined;
      const t0 = performance.now();
      let tokens = 0;
      for await (const _token of sequence.evaluate(prompt, { temperature: 0, grammarEvaluationState })) if (++tokens >= maxTokens) break;
      return { tokens, ms: performance.now() - t0 };
    };
  return { withGrammar: loop(grammar), withoutGrammar: loop(), dispose: () => model.dispose() };
}

export type SummarySpeed = { ours: Rate; bareWithGrammar: Rate; bareWithoutGrammar: Rate; threads: number };

export async function summarySpeed(path: string, short = 8, long = 48, repetitions = 3): Promise<SummarySpeed> {
  const llm = new LlamaLlm({ model: "bench", path, gpu: "off" });
  const { context } = await llm.load();
  const threads = context.currentThreads;
  const b = await bare(path, context.contextSize, threads);
  const sides: Record<Exclude<keyof SummarySpeed, "threads">, Side> = { ours: ours(llm), bareWithGrammar: b.withGrammar, bareWithoutGrammar: b.withoutGrammar };
  const rates = { ours: [] as Rate[], bareWithGrammar: [] as Rate[], bareWithoutGrammar: [] as Rate[] };
  for (let i = 0; i < repetitions; i++) {
    for (const [name, side] of Object.entries(sides) as [keyof typeof sides, Side][]) rates[name].push(rate(await side(short), await side(long)));
  }
  await b.dispose();
  await (await llm.load()).model.dispose();
  return { ours: median(rates.ours), bareWithGrammar: median(rates.bareWithGrammar), bareWithoutGrammar: median(rates.bareWithoutGrammar), threads };
}
