import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { BACKGROUND_JOBS, BACKGROUND_TASKS, registerBackgroundWork, startBackgroundWork } from "../src/background";
import { JOB_NAMES } from "../src/jobs/contracts";
import { makeTenant, makeTestDeps } from "./helpers";
import { seedRecording, voiced, wav } from "./modules/pipeline-fixtures";

// All background work is one table in src/background.ts (decision 134).

describe("background work", () => {
  test("the table names every job once, each task once, and files that exist", () => {
    expect(BACKGROUND_JOBS.map((e) => e.job).sort()).toEqual([...JOB_NAMES].sort());
    const tasks = BACKGROUND_TASKS.map((e) => e.task);
    expect(new Set(tasks).size).toBe(tasks.length);
    for (const { file } of [...BACKGROUND_JOBS, ...BACKGROUND_TASKS])
      expect({ file, exists: existsSync(join(import.meta.dir, "../src", file)) }).toEqual({ file, exists: true });
  });

  test("the table is the only place that registers: no module registers a job or builds a task itself", () => {
    const background = readFileSync(join(import.meta.dir, "../src/background.ts"), "utf8");
    const offending: string[] = [];
    for (const file of new Bun.Glob("src/**/*.ts").scanSync(join(import.meta.dir, ".."))) {
      if (file === "src/background.ts" || file === "src/jobs/queue.ts") continue;
      const text = readFileSync(join(import.meta.dir, "..", file), "utf8");
      if (/\bqueue\.register\(|pattern:\s*"[\d*/ ,-]+"/.test(text)) offending.push(file);
    }
    expect(offending).toEqual([]);
    expect(background).toContain("queue.register(");
  });

  test("registering has no side effect; starting revives verifications whose jobs died", async () => {
    const deps = await makeTestDeps();
    const tenant = makeTenant(deps, "background");
    const id = await seedRecording(deps, { projectId: tenant.project.id, mode: "test" }, wav(voiced(1)), { endUserId: null });
    deps.db.query("UPDATE recordings SET verification = 'pending' WHERE id = ?").run(id);
    const verifications = () => deps.db.query<{ n: number }, []>("SELECT count(*) AS n FROM jobs WHERE type = 'recordings.verify_upload'").get()!.n;
    const before = verifications();
    const tasks = registerBackgroundWork(deps);
    expect(tasks.map((t) => t.name)).toContain("expire-recordings");
    expect(verifications()).toBe(before);
    startBackgroundWork(deps);
    expect(verifications()).toBe(before + 1);
  });
});
