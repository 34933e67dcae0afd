import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { THROTTLED_SPIN_COUNT } from "../../src/engines/openmp";

/** libgomp's own report of the settings it started with (OMP_DISPLAY_ENV), in a process that loaded the addon. */
async function libgompSettings(env: Record<string, string>): Promise<Record<string, string>> {
  const child = Bun.spawn([process.execPath, join(import.meta.dir, "support", "load-whisper-addon.ts")], {
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", OMP_DISPLAY_ENV: "verbose", ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stderr, code] = await Promise.all([new Response(child.stderr).text(), child.exited]);
  expect(code, stderr).toBe(0);
  return Object.fromEntries([...stderr.matchAll(/^\s+(\w+) = '([^']*)'/gm)].map((m) => [m[1]!, m[2]!]));
}

// Decision 201: whisper.cpp's OpenMP threads sleep soon when idle, so a busy box's other work
// does not starve the threads that transcribe.
describe("OpenMP spinning under Parley's whisper addon", () => {
  test("libgomp starts with the throttled spin count when the addon loads", async () => {
    const settings = await libgompSettings({});
    expect(settings.GOMP_SPINCOUNT).toBe(String(THROTTLED_SPIN_COUNT));
  });

  test("an operator's own OpenMP setting is kept", async () => {
    expect((await libgompSettings({ OMP_WAIT_POLICY: "active" })).GOMP_SPINCOUNT).not.toBe(String(THROTTLED_SPIN_COUNT));
    expect((await libgompSettings({ GOMP_SPINCOUNT: "5000" })).GOMP_SPINCOUNT).toBe("5000");
  });
});
