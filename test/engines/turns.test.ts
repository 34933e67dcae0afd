import { describe, expect, test } from "bun:test";
import { ensureTestModels } from "../../scripts/test-models/cache";
import { LlamaLlm } from "../../src/engines/llama-llm";
import type { ChatMessage } from "../../src/engines/llm";
import { Turns } from "../../src/engines/turns";
import { WhisperTranscriber } from "../../src/engines/whisper-transcriber";
import { voicedBurst } from "./signals";

const models = ensureTestModels();
const messages: ChatMessage[] = [{ role: "user", content: "Say hello." }];

/** Takes a turn on `turns`, once it has it, and keeps it until release() is called. */
async function holdTurn(turns: Turns) {
  let release!: () => void;
  let taken!: () => void;
  const running = new Promise<void>((resolve) => (taken = resolve));
  const held = turns.take(() => {
    taken();
    return new Promise<void>((resolve) => (release = resolve));
  });
  await running;
  return { release, held };
}

describe("turns", () => {
  test("calls run one at a time in order of arrival; one that fails does not hold the next", async () => {
    const turns = new Turns();
    const log: string[] = [];
    const { release, held } = await holdTurn(turns);
    const failing = turns.take(async () => {
      log.push("failing");
      throw new Error("model broke");
    });
    const next = turns.take(async () => log.push("next"));
    await new Promise(setImmediate); // every pending promise job has run: still nobody's turn
    expect(log).toEqual([]);
    release();
    await held;
    await expect(failing).rejects.toThrow("model broke");
    await next;
    expect(log).toEqual(["failing", "next"]);
  });

  test("a wait for earlier calls goes through excludeWait, so a job's time limit can leave it out", async () => {
    const turns = new Turns();
    const { release, held } = await holdTurn(turns);
    let waiting = 0;
    const excludeWait = <W>(wait: Promise<W>) => {
      waiting++;
      return wait.finally(() => waiting--);
    };
    const call = turns.take(async () => waiting, excludeWait);
    expect(waiting).toBe(1);
    release();
    await held;
    expect(await call).toBe(0); // the wait was over when the call ran
  });
});

describe("the local engines share the cores for background work (decision 110)", () => {
  test("a transcription and a summary wait for the background call ahead of them; an Ask turn does not", async () => {
    const cores = new Turns();
    const whisper = new WhisperTranscriber({ model: "tiny", path: models.whisper, gpu: "off", cores });
    const llm = new LlamaLlm({ model: "tiny", path: models.gguf, gpu: "off", cores });
    const { release, held } = await holdTurn(cores);
    const settled: string[] = [];
    const transcription = whisper.transcribe(voicedBurst(3, 0, 3), { language: "en" }).then(() => settled.push("transcription"));
    const summary = llm.complete({ messages, maxTokens: 4 }).then(() => settled.push("summary"));

    const answer = await llm.complete({ messages, maxTokens: 4, interactive: true });
    expect(answer.tokens.output).toBeGreaterThan(0);
    expect(settled).toEqual([]); // the Ask turn ran while both still waited for the cores

    release();
    await held;
    await Promise.all([transcription, summary]);
    expect(settled).toEqual(["transcription", "summary"]);
  });
});
