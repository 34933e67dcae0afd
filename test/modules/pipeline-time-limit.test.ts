import { describe, expect, test } from "bun:test";
import { TimeLimitError, withTimeLimit } from "../../src/modules/transcriptions/time-limit";

/** A promise that resolves after `ms` (an engine's turn coming, or work being done). */
const after = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

describe("job time limits count running time, not time queued for the engine", () => {
  test("work past the limit is a TimeLimitError, even when it ignores the signal", async () => {
    await expect(withTimeLimit(150, () => after(600))).rejects.toBeInstanceOf(TimeLimitError);
  });

  test("a wait passed through excludeWait does not spend the limit", async () => {
    const result = await withTimeLimit(300, async ({ excludeWait }) => {
      await excludeWait(after(600));
      await after(100);
      return "done";
    });
    expect(result).toBe("done");
  });

  test("the clock runs again after the wait, from where it stopped", async () => {
    const run = withTimeLimit(300, async ({ excludeWait }) => {
      await after(200);
      await excludeWait(after(300));
      await after(200); // 200 + 200 ms of running time: past the 300 ms limit
    });
    await expect(run).rejects.toBeInstanceOf(TimeLimitError);
  });

  test("the signal aborts at the deadline with the TimeLimitError as reason", async () => {
    let seen: AbortSignal | null = null;
    await withTimeLimit(100, async ({ signal }) => {
      seen = signal;
      await new Promise((_, reject) => signal.addEventListener("abort", () => reject(signal.reason), { once: true }));
    }).catch(() => {});
    expect(seen!.aborted).toBe(true);
    expect(seen!.reason).toBeInstanceOf(TimeLimitError);
  });
});
