import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { nativeWhisperStatus } from "../src/engines/whisper-native-build";
import { makeTempDir } from "./helpers";

// The appliance ships as one executable: build it and run it with no checkout beside it.
describe("compiled executable", () => {
  test("builds, migrates a fresh data dir, makes keys, serves the API and the dashboard", async () => {
    const dir = makeTempDir();
    const bin = join(dir, "parley");
    const root = join(import.meta.dir, "..");
    const build = Bun.spawnSync([process.execPath, join(root, "scripts", "build.ts"), bin], { cwd: root, stderr: "pipe" });
    expect(build.exitCode).toBe(0);

    const env = { PATH: process.env.PATH ?? "", PARLEY_DATA_DIR: join(dir, "data"), PARLEY_LOG_LEVEL: "silent" };
    expect(Bun.spawnSync([bin, "projects", "create", "p"], { cwd: dir, env }).exitCode).toBe(0);
    const key = JSON.parse(Bun.spawnSync([bin, "keys", "create", "--project", "p", "--mode", "test", "--json"], { cwd: dir, env }).stdout.toString()).key;

    // With no PATH at all (no ffmpeg) and no node_modules, the carried engines load from the
    // runtime folder: the decoder, whisper.cpp and onnxruntime's VAD (decisions 090, 091).
    const doctor = Bun.spawnSync([bin, "doctor", "--json"], { cwd: dir, env: { ...env, PATH: "" }, stderr: "pipe" });
    const checks = JSON.parse(doctor.stdout.toString()) as { check: string; ok: boolean; detail: string }[];
    const check = (name: string) => checks.find((c) => c.check === name);
    expect(check("audio decoder")).toMatchObject({ ok: true, detail: expect.stringContaining("WebAssembly") });
    expect(check("vad")).toMatchObject({ ok: true, detail: expect.stringContaining("onnxruntime") });
    if (nativeWhisperStatus().usable) expect(check("whisper build")?.detail).toContain(join(dir, "data", "runtime"));

    const port = String(20000 + Math.floor(Math.random() * 20000));
    const server = Bun.spawn([bin, "serve"], { cwd: dir, env: { ...env, PARLEY_PORT: port }, stdout: "ignore", stderr: "ignore" });
    try {
      const base = `http://127.0.0.1:${port}`;
      let up = false;
      for (let i = 0; i < 100 && !up; i++) {
        await Bun.sleep(100);
        up = await fetch(`${base}/healthz`).then(
          (r) => r.ok,
          () => false,
        );
      }
      expect(up).toBe(true);
      const created = await fetch(`${base}/v1/end-users`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: "{}",
      });
      expect(created.status).toBe(201);
      expect((await fetch(`${base}/dashboard`)).headers.get("content-type")).toContain("text/html");
      expect((await (await fetch(`${base}/v1/openapi.json`)).json()).openapi).toBe("3.1.0");
      // sqlite-vec was written out to the one versioned runtime folder (decision 090).
      const versions = readdirSync(join(dir, "data", "runtime"));
      expect(versions).toHaveLength(1);
      expect(existsSync(join(dir, "data", "runtime", versions[0]!, "vec0.so"))).toBe(true);
    } finally {
      server.kill("SIGTERM");
      await server.exited;
    }
  }, 120_000);
});
