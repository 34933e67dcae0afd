import { getLlama } from "node-llama-cpp";
import { LlamaLlm } from "../../src/engines/llama-llm";
import { TEMPLATES } from "../../src/modules/summaries/templates";

/**
 * Summary generation speed against node-llama-cpp's own bare loop on the same GGUF: ours is
 * the call a summary makes (LlamaLlm.complete: chat wrapper, JSON-schema grammar, the
 * general template, temperature 0); the bare loop tokenizes the same text and evaluates it
 * with sequence.evaluate, no chat wrapper, no grammar. Each side runs twice, to `short` and
 * `long` output tokens, and its rate is the difference: (tokens long - tokens short) /
 * (time long - time short), so the prompt's evaluation and fixed costs cancel out.
 */

const SYSTEM = "Summarise the meeting as JSON.";
const TRANSCRIPT = "[00:00] SPEAKER_1: the budget is a summary of the meeting";

export type Rate = { tokens: number; seconds: number; perSecond: number };
const rate = (a: { tokens: number; ms: number }, b: { tokens: number; ms: number }): Rate => {
  const tokens = b.tokens - a.tokens;
  const seconds = (b.ms - a.ms) / 1000;
  return { tokens, seconds, perSecond: tokens / seconds };
};

type Side = (maxTokens: number) => Promise<{ tokens: number; ms: number }>;

/** Ours: the summary's own call. */
function ours(llm: LlamaLlm): Side {
  const template = TEMPLATES.general;
  return async (maxTokens) => {
    const t0 = performance.now();
    const c = await llm.complete({ messages: [{ role: "system", content: SYSTEM }, { role: "user", content: TRANSCRIPT }], jsonSchema: template.schema, maxTokens, temperature: 0 });
    return { tokens: c.tokens.output, ms: performance.now() - t0 };
  };
}

/** The bare loop on its own model and context of our context's size, default threads like ours. */
async function bare(path: string, contextSize: number): Promise<{ side: Side; dispose: () => Promise<void> }> {
  const llama = await getLlama({ gpu: false, build: "never", logLevel: "error" as never, progressLogs: false });
  const model = await llama.loadModel({ modelPath: path });
  const context = await model.createContext({ contextSize, sequences: 1 });
  const sequence = context.getSequence();
  const prompt = model.tokenize(`${SYSTEM}\n${TRANSCRIPT}`);
  const side: Side = async (maxTokens) => {
    await sequence.clearHistory();
    const t0 = performance.now();
    let tokens = 0;
    for await (const _token of sequence.evaluate(prompt, { temperature: 0 })) if (++tokens >= maxTokens) break;
    return { tokens, ms: performance.now() - t0 };
  };
  return { side, dispose: () => model.dispose() };
}

/** Tokens per second of both sides, runs interleaved (ours short, bare short, ours long, bare long) so load changes hit both. */
export async function summarySpeed(path: string, short = 2, long = 14): Promise<{ ours: Rate; bare: Rate }> {
  const llm = new LlamaLlm({ model: "bench", path, gpu: "off" });
  const b = await bare(path, await llm.contextTokens());
  const o = ours(llm);
  const runs = { ours: [] as { tokens: number; ms: number }[], bare: [] as { tokens: number; ms: number }[] };
  for (const max of [short, long]) {
    runs.ours.push(await o(max));
    runs.bare.push(await b.side(max));
  }
  await b.dispose();
  await (await llm.load()).model.dispose();
  return { ours: rate(runs.ours[0]!, runs.ours[1]!), bare: rate(runs.bare[0]!, runs.bare[1]!) };
}
