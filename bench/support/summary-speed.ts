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

const TRANSCRIPT = [
  "[00:00] SPEAKER_1: Good morning, thanks for coming in today.",
  "[00:03] SPEAKER_2: Morning. The knee has been bothering me again since last week.",
  "[00:08] SPEAKER_1: Is it worse when you climb the stairs or when you sit for a long time?",
  "[00:13] SPEAKER_2: Mostly on the stairs, and a little in the evening after work.",
].join("\n");

export type Rate = { tokens: number; seconds: number; perSecond: number };
const rate = (a: { tokens: number; ms: number }, b: { tokens: number; ms: number }): Rate => {
  const tokens = b.tokens - a.tokens;
  const seconds = (b.ms - a.ms) / 1000;
  return { tokens, seconds, perSecond: tokens / seconds };
};

async function ours(path: string, maxTokens: number[]): Promise<{ rate: Rate; contextSize: number }> {
  const llm = new LlamaLlm({ model: "bench", path, gpu: "off" });
  const template = TEMPLATES.general;
  const runs: { tokens: number; ms: number }[] = [];
  for (const max of maxTokens) {
    const t0 = performance.now();
    const c = await llm.complete({ messages: [{ role: "system", content: template.prompt }, { role: "user", content: TRANSCRIPT }], jsonSchema: template.schema, maxTokens: max, temperature: 0 });
    runs.push({ tokens: c.tokens.output, ms: performance.now() - t0 });
  }
  const contextSize = await llm.contextTokens();
  (await llm.load()).model.dispose();
  return { rate: rate(runs[0]!, runs[1]!), contextSize };
}

async function bare(path: string, contextSize: number, maxTokens: number[]): Promise<Rate> {
  const llama = await getLlama({ gpu: false, build: "never", logLevel: "error" as never, progressLogs: false });
  const model = await llama.loadModel({ modelPath: path });
  const context = await model.createContext({ contextSize, sequences: 1 });
  const sequence = context.getSequence();
  const prompt = model.tokenize(`${TEMPLATES.general.prompt}\n${TRANSCRIPT}`);
  const runs: { tokens: number; ms: number }[] = [];
  for (const max of maxTokens) {
    await sequence.clearHistory();
    const t0 = performance.now();
    let tokens = 0;
    for await (const _token of sequence.evaluate(prompt, { temperature: 0 })) if (++tokens >= max) break;
    runs.push({ tokens, ms: performance.now() - t0 });
  }
  await model.dispose();
  return rate(runs[0]!, runs[1]!);
}

/** Tokens per second of both sides; the bare loop gets our context size and the same (default) threads. */
export async function summarySpeed(path: string, short = 4, long = 36): Promise<{ ours: Rate; bare: Rate }> {
  const o = await ours(path, [short, long]);
  return { ours: o.rate, bare: await bare(path, o.contextSize, [short, long]) };
}
