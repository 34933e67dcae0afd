// bench/llm-threads.ts: one thread or two for the local LLM on a busy 2-core box (decision
// 214). node-llama-cpp's bare loop on the Qwen2.5-1.5B-shaped stand-in (scripts/test-models),
// no chat wrapper, no grammar: a prompt of --prompt-tokens evaluated, then --gen-tokens
// generated, with 1 and 2 threads interleaved, first on the box as it is, then with 1 and 2
// more processes burning a core each (`yes`, as another model, a live stream or an operator's
// job would). Prints the median rates per row with the load average.
// Usage: bun bench/llm-threads.ts [--rounds 3] [--prompt-tokens 256] [--gen-tokens 24] [--busy 0,1,2]
import { type ChildProcess, spawn } from "node:child_process";
import { loadavg } from "node:os";
import { parseArgs } from "node:util";
import type { LlamaModel, Token } from "node-llama-cpp";
import { ensureShapedGguf } from "../scripts/test-models/cache";

const { values: flags } = parseArgs({
  options: {
    rounds: { type: "string", default: "3" },
    "prompt-tokens": { type: "string", default: "256" },
    "gen-tokens": { type: "string", default: "24" },
    busy: { type: "string", default: "0,1,2" },
  },
});
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
/** Spoken English for the prompt, repeated to length. */
const TEXT = "Good morning, thanks for coming in today. The knee has been bothering me again since last week, mostly on the stairs. ";

/** Prompt and generation rates (tok/s) of one fresh context with `threads`. */
async function measure(model: LlamaModel, threads: number, prompt: Token[]): Promise<{ prompt: number; gen: number }> {
  const context = await model.createContext({ contextSize: 1024, threads });
  try {
    const sequence = context.getSequence();
    let t = performance.now();
    await sequence.evaluateWithoutGeneratingNewTokens(prompt.slice(0, -1));
    const promptRate = ((prompt.length - 1) / (performance.now() - t)) * 1000;
    // The first token comes from the prompt's last one; the rate counts the tokens after it.
    let n = 0;
    t = performance.now();
    let start = t;
    for await (const _ of sequence.evaluate(prompt.slice(-1), { temperature: 0 })) {
      if (n === 0) start = performance.now();
      if (++n > Number(flags["gen-tokens"])) break;
    }
    return { prompt: promptRate, gen: ((n - 1) / (performance.now() - start)) * 1000 };
  } finally {
    await context.dispose();
  }
}

const burners: ChildProcess[] = [];
const stop = () => {
  for (const p of burners.splice(0)) p.kill();
};
process.on("exit", stop);

async function main() {
  const { getLlama } = await import("node-llama-cpp");
  const llama = await getLlama({ gpu: false, build: "never", logLevel: "error" as never, progressLogs: false });
  const model = await llama.loadModel({ modelPath: ensureShapedGguf() });
  const prompt = model.tokenize(TEXT.repeat(20)).slice(0, Number(flags["prompt-tokens"]));
  await measure(model, 2, prompt.slice(0, 16)); // pages the weights in
  console.log(`${prompt.length} prompt tokens, ${flags["gen-tokens"]} generated, median of ${flags.rounds} rounds, tok/s`);
  for (const busy of flags.busy.split(",").map(Number)) {
    while (burners.length < busy) burners.push(spawn("yes", { stdio: ["ignore", "ignore", "ignore"] }));
    const rates: Record<1 | 2, { prompt: number[]; gen: number[] }> = { 1: { prompt: [], gen: [] }, 2: { prompt: [], gen: [] } };
    const loads: number[] = [];
    for (let i = 0; i < Number(flags.rounds); i++)
      for (const threads of [1, 2] as const) {
        const r = await measure(model, threads, prompt);
        rates[threads].prompt.push(r.prompt);
        rates[threads].gen.push(r.gen);
        loads.push(loadavg()[0]!);
      }
    const f = (xs: number[]) => median(xs).toFixed(2);
    console.log(
      `+${busy} busy (load ${Math.min(...loads).toFixed(1)}-${Math.max(...loads).toFixed(1)}): prompt 1 thread ${f(rates[1].prompt)}, 2 threads ${f(rates[2].prompt)}; generation 1 thread ${f(rates[1].gen)}, 2 threads ${f(rates[2].gen)}`,
    );
    console.log(`  all: ${JSON.stringify(rates, (_, v) => (typeof v === "number" ? Number(v.toFixed(2)) : v))}`);
  }
  stop();
}

await main();
