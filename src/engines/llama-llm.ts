import { existsSync, statSync } from "node:fs";
import { availableParallelism } from "node:os";
import type { ChatHistoryItem, Llama, LlamaChat, LlamaContext, LlamaModel } from "node-llama-cpp";
import type { RuntimeFiles } from "../runtime/files";
import { CARRIED_LLAMA, useLlamaBinsFrom } from "../runtime/llama";
import type { GpuSetting } from "./gpu";
import {
  type ChatMessage,
  type Completion,
  type CompletionRequest,
  type Llm,
  LlmUnavailableError,
  type PrefillOptions,
  type Prefilled,
  stripReasoning,
} from "./llm";
import { busyElsewhere, threadsFor } from "./llm-threads";
import { MissingModelError } from "./missing-model";
import { Turns } from "./turns";

export type LlamaOptions = {
  /** Model name as in models/manifest.json. */
  model: string;
  /** The GGUF file; checked at first use. */
  path: string;
  gpu: GpuSetting;
  /** Upper bound of the context window; the model's own training size caps it too. */
  maxContextTokens?: number;
  /** A compiled executable's runtime folder, which carries llama.cpp's CPU build (decision 092). */
  runtime?: RuntimeFiles;
  /** The turns background model calls share (decision 110); its own when absent. */
  cores?: Turns;
  /** How busy the rest of the box is, in cores, before each call (decision 214); the kernel's count when absent. */
  busyElsewhere?: () => Promise<number>;
};

/** Below this file size a model is a toy (tests, benches): its matrices are so small that one thread is 20-40x faster than two. */
const TINY_MODEL_BYTES = 50 * 1024 ** 2;

/**
 * One thread per core that can do math, never more than the process may run at once.
 * node-llama-cpp's CPU default is at least 4 threads: on a 2-core box the extra threads
 * spin in ggml's barriers and generation gets about 100x slower (decision 109).
 */
export function generationThreads(llama: Llama, modelBytes: number): number {
  if (modelBytes < TINY_MODEL_BYTES) return 1;
  return Math.max(1, Math.min(llama.cpuMathCores, availableParallelism()));
}

type Loaded = { llama: Llama; model: LlamaModel; context: LlamaContext; chat: LlamaChat };

const STOP: Record<string, Completion["finishReason"]> = { maxTokens: "length", abort: "error" };

/** The chat history node-llama-cpp renders for these messages. */
const historyOf = (messages: ChatMessage[]): ChatHistoryItem[] =>
  messages.map((m) => (m.role === "assistant" ? { type: "model", response: [m.content] } : { type: m.role, text: m.content }));

/** How many tokens two token lists share from their start. */
function sharedPrefix(a: readonly unknown[], b: readonly unknown[]): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}

/**
 * Llm over node-llama-cpp with a local GGUF model. Loads once on first use (GPU when the
 * setting allows and one is present, else CPU); calls take turns on one context sequence.
 * The sequence keeps what it evaluated last: a call whose prompt starts with the same tokens
 * evaluates only the rest (node-llama-cpp keeps the shared prefix), which `prefill` uses to
 * evaluate a summary's prompt while its transcript is still growing (decision 206). A
 * background call (a summary) first takes its turn on the cores shared with the other local
 * engines; an interactive one (Ask) does not wait for a transcription to end (decision 110).
 */
export class LlamaLlm implements Llm {
  readonly provider = "llama_cpp";
  readonly model: string;
  private loaded: Promise<Loaded> | null = null;
  private readonly sequenceTurns = new Turns();
  /** The messages the last prefill evaluated, while nothing else has used the sequence since. */
  private prefilled: ChatMessage[] | null = null;
  private readonly cores: Turns;

  constructor(private readonly options: LlamaOptions) {
    this.model = options.model;
    this.cores = options.cores ?? new Turns();
  }

  installed(): boolean {
    return existsSync(this.options.path);
  }

  /**
   * The compute backend in use ("cuda", "vulkan", "metal" or "cpu"), or null before the first
   * load; for `parley doctor`. A GPU build that found no device (a Vulkan loader with only
   * software drivers) runs on the CPU, and says so.
   */
  async backend(): Promise<string | null> {
    if (!this.loaded) return null;
    const loaded = await this.loaded.catch(() => null);
    if (!loaded?.llama.gpu) return loaded ? "cpu" : null;
    return (await loaded.llama.getGpuDeviceNames()).length ? loaded.llama.gpu : "cpu";
  }

  load(): Promise<Loaded> {
    this.loaded ??= this.open().catch((err) => {
      this.loaded = null;
      throw err;
    });
    return this.loaded;
  }

  private async open(): Promise<Loaded> {
    if (!existsSync(this.options.path)) throw new MissingModelError(this.model, "language", this.options.path);
    // The executable carries the CPU build only (GPU builds break its size budget): it never looks for a GPU.
    const carried = this.options.runtime?.folder(CARRIED_LLAMA);
    if (carried) useLlamaBinsFrom(carried);
    const { getLlama, LlamaChat } = await import("node-llama-cpp");
    const gpu = carried || this.options.gpu === "off" ? false : this.options.gpu;
    // build "never": a production server must not try to compile llama.cpp when a prebuilt binary does not fit.
    const llama = await getLlama({ gpu, build: "never", logLevel: "error" as never, progressLogs: false });
    try {
      const model = await llama.loadModel({ modelPath: this.options.path });
      const context = await model.createContext({
        contextSize: { max: Math.min(model.trainContextSize, this.options.maxContextTokens ?? 8192) },
        sequences: 1,
        threads: generationThreads(llama, statSync(this.options.path).size),
      });
      return { llama, model, context, chat: new LlamaChat({ contextSequence: context.getSequence() }) };
    } catch (err) {
      throw new LlmUnavailableError(`the language model ${this.model} cannot be loaded: ${(err as Error).message}`);
    }
  }

  async contextTokens(): Promise<number> {
    return (await this.load()).context.contextSize;
  }

  async countTokens(text: string): Promise<number> {
    return (await this.load()).model.tokenize(text).length;
  }

  complete(request: CompletionRequest): Promise<Completion> {
    const onSequence = () => this.sequenceTurns.take(() => this.run(request), request.excludeWait);
    // The cores first: a summary holding the sequence while it waits for them would hold Ask up too.
    return request.interactive ? onSequence() : this.cores.take(onSequence, request.excludeWait);
  }

  /**
   * Evaluates `messages` into the sequence without answering, the last (user) message as text
   * still being written: a later call whose prompt starts the same way evaluates only what
   * follows. At most `maxNewTokens` of the last message beyond what the previous prefill
   * evaluated (all of it when something else used the sequence since), so one call holds the
   * cores a bounded time; `done` says whether it reached the end. A background call: it takes
   * its turn on the shared cores. Whatever runs on the sequence next (Ask, another summary)
   * replaces what it evaluated, which costs only the time it would have saved.
   */
  prefill(messages: ChatMessage[], run: PrefillOptions = {}): Promise<Prefilled> {
    const last = messages.at(-1);
    if (last?.role !== "user") throw new Error("prefill needs a user message last");
    const work = async (): Promise<Prefilled> => {
      run.signal?.throwIfAborted();
      const loaded = await this.load();
      const { chat, model } = loaded;
      await this.pace(loaded);
      const sequence = chat.sequence;
      const earlier = this.prefilled;
      const same =
        earlier?.length === messages.length && earlier.slice(0, -1).every((m, i) => m.role === messages[i]!.role && m.content === messages[i]!.content);
      const from = same && last.content.startsWith(earlier.at(-1)!.content) ? earlier.at(-1)!.content.length : 0;
      let upTo = last.content.length;
      const fresh = model.tokenize(last.content.slice(from));
      if (run.maxNewTokens !== undefined && fresh.length > run.maxNewTokens)
        upTo = from + Math.max(1, model.detokenize(fresh.slice(0, run.maxNewTokens)).length);
      const content = last.content.slice(0, upTo);
      const before = sequence.tokenMeter.usedInputTokens;
      const kept = [...sequence.contextTokens];
      this.prefilled = null;
      await chat.loadChatAndCompleteUserMessage(historyOf(messages.slice(0, -1)), { initialUserPrompt: content, maxTokens: 0, signal: run.signal });
      this.prefilled = [...messages.slice(0, -1), { role: "user", content }];
      const evaluated = sequence.tokenMeter.usedInputTokens - before;
      return {
        evaluated,
        reused: Math.min(sharedPrefix(kept, sequence.contextTokens), sequence.contextTokens.length - evaluated),
        done: upTo === last.content.length,
      };
    };
    return this.cores.take(() => this.sequenceTurns.take(work, run.excludeWait), run.excludeWait);
  }

  /**
   * Sets the threads of the call about to run: the context's when the rest of the box is
   * idle, fewer when other work holds cores (decision 214). node-llama-cpp gives each batch
   * at most the Llama's maxThreads. Decided once a call: a prefill step is short, an answer
   * keeps the count it started with.
   */
  private async pace({ llama, context }: Loaded): Promise<void> {
    const busy = await (this.options.busyElsewhere ?? busyElsewhere)();
    llama.maxThreads = threadsFor(context.idealThreads, availableParallelism(), busy);
  }

  private async run(request: CompletionRequest): Promise<Completion> {
    request.signal?.throwIfAborted();
    const loaded = await this.load();
    const { llama, chat } = loaded;
    await this.pace(loaded);
    const sequence = chat.sequence;
    // The sequence holds this call's prompt and answer from now on, no longer a prefill's.
    this.prefilled = null;
    const before = { input: sequence.tokenMeter.usedInputTokens, output: sequence.tokenMeter.usedOutputTokens };
    // What the sequence held: the prompt's shared start with it is not evaluated again.
    const kept = [...sequence.contextTokens];
    const history = historyOf(request.messages);
    history.push({ type: "model", response: [] });
    // The grammar forces output that parses against the schema (llama.cpp GBNF).
    const grammar = request.jsonSchema ? await llama.createGrammarForJsonSchema(request.jsonSchema as never) : undefined;
    const response = await chat.generateResponse(history, {
      grammar,
      maxTokens: request.maxTokens,
      temperature: request.temperature ?? 0,
      signal: request.signal,
    });
    const evaluated = sequence.tokenMeter.usedInputTokens - before.input;
    const output = sequence.tokenMeter.usedOutputTokens - before.output;
    // As OpenAI counts them: input is the whole prompt, cached the part of it not evaluated again.
    const cached = Math.max(0, Math.min(sharedPrefix(kept, sequence.contextTokens), sequence.contextTokens.length - output - evaluated));
    return {
      text: stripReasoning(response.response),
      tokens: { input: evaluated + cached, output, cached },
      finishReason: STOP[response.metadata.stopReason] ?? "stop",
    };
  }
}
