import { spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, test } from "bun:test";
import { ensureTestModels } from "../../scripts/test-models/cache";
import { LlamaLlm } from "../../src/engines/llama-llm";
import { busyElsewhere, threadsFor } from "../../src/engines/llm-threads";
import { makeTempDir } from "../helpers";

describe("threads for a call (decision 214)", () => {
  test.each([
    // [most, cores, busy elsewhere, threads]
    [2, 2, 0, 2],
    [2, 2, 0.4, 2],
    [2, 2, 1, 1], // one other process on a core: two threads wait for it at every barrier
    [2, 2, 7, 1],
    [8, 16, 4, 8],
    [8, 16, 10, 6],
    [1, 2, 0, 1],
  ])("at most %p, %p cores, %p busy elsewhere: %p", (most, cores, busy, threads) => {
    expect(threadsFor(most, cores, busy)).toBe(threads);
  });
});

describe("how busy the rest of the box is", () => {
  test("the kernel's runnable count, less the thread reading it", async () => {
    const file = join(makeTempDir(), "loadavg");
    writeFileSync(file, "7.50 6.92 4.63 7/146 9383\n");
    // A process dir with no threads to tell apart.
    expect(await busyElsewhere(file, makeTempDir())).toBe(6);
  });

  test("this process's runtime helpers (named other than its main thread) are not counted; its model threads are", async () => {
    const dir = makeTempDir();
    const loadavg = join(dir, "loadavg");
    writeFileSync(loadavg, "1.20 0.90 0.50 4/146 9383\n");
    writeFileSync(join(dir, "stat"), "100 (bun) R 1 100 100 0 -1\n");
    const task = (tid: number, name: string, state: string) => {
      mkdirSync(join(dir, "task", String(tid)), { recursive: true });
      writeFileSync(join(dir, "task", String(tid), "stat"), `${tid} (${name}) ${state} 1 ${tid} ${tid} 0 -1\n`);
    };
    task(100, "bun", "R"); // the reader
    task(101, "HeapHelper", "R"); // the garbage collector, for a moment
    task(102, "JITWorker", "S");
    task(103, "bun", "R"); // a model thread still at work
    // 4 runnable: the reader and the collector are not the rest of the box; the model thread and one other are.
    expect(await busyElsewhere(loadavg, dir)).toBe(2);
  });

  test("on this box, processes burning a core are counted", async () => {
    const burners = [0, 1].map(() => spawn("yes", { stdio: ["ignore", "ignore", "ignore"] }));
    try {
      // Both are runnable from their start; the reads wait for the kernel to have them, not for a time.
      let seen = 0;
      for (let i = 0; i < 50 && seen < 2; i++) seen = await busyElsewhere();
      expect(seen).toBeGreaterThanOrEqual(2);
    } finally {
      for (const b of burners) b.kill();
    }
  });

  test("without the kernel's count, the load average", async () => {
    expect(typeof (await busyElsewhere(join(makeTempDir(), "none")))).toBe("number");
  });
});

test("every call and prefill step asks how busy the box is and runs with the threads that leaves", async () => {
  let asked = 0;
  const llm = new LlamaLlm({
    model: "tiny",
    path: ensureTestModels().gguf,
    gpu: "off",
    busyElsewhere: async () => {
      asked++;
      return 5;
    },
  });
  const { llama } = await llm.load();
  await llm.complete({ messages: [{ role: "user", content: "Hello there." }], maxTokens: 2 });
  expect(asked).toBe(1);
  expect(llama.maxThreads).toBe(1);
  await llm.prefill([{ role: "user", content: "We review the budget on Friday." }], { maxNewTokens: 4 });
  expect(asked).toBe(2);
});
