// bench/appliance.ts: the figures of the single executable (issue 15): its size (target
// <= 250 MB), the time from starting `parley serve` on a fresh data dir to the first 200 of
// /healthz (target <= 1 s), and the server's resident memory idle with no models (target
// <= 150 MB). Each start runs in an empty folder with an empty PATH (no ffmpeg), the
// executable copied there alone. Not measured here yet: transcription time against the
// checkout (the executable has no command that transcribes a file outside the upload flow).
// Usage: bun bench/appliance.ts [path to an executable; default: build one with scripts/build.ts] [starts, default 5]
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./support/load";

const root = join(import.meta.dir, "..");
const work = mkdtempSync(join(tmpdir(), "parley-appliance-"));
let bin = process.argv[2];
if (!bin) {
  bin = join(work, "built", "parley");
  const build = Bun.spawnSync([process.execPath, join(root, "scripts", "build.ts"), bin], { cwd: root, stdout: "ignore", stderr: "inherit" });
  if (build.exitCode !== 0) throw new Error("the build failed");
}
const starts = Number(process.argv[3] ?? 5);
const MB = 1024 * 1024;

function rssMb(pid: number): number {
  const kb = Number(readFileSync(`/proc/${pid}/status`, "utf8").match(/VmRSS:\s+(\d+)/)?.[1] ?? 0);
  return kb / 1024;
}

async function startOnce(i: number): Promise<{ firstOkMs: number; idleRssMb: number }> {
  const dir = join(work, `run-${i}`);
  mkdirSync(dir);
  const exe = join(dir, "parley");
  copyFileSync(bin!, exe);
  chmodSync(exe, 0o755);
  const port = freePort();
  const env = { PATH: "", PARLEY_DATA_DIR: join(dir, "data"), PARLEY_PORT: String(port), PARLEY_LOG_LEVEL: "silent" };
  const started = performance.now();
  const server = Bun.spawn([exe, "serve"], { cwd: dir, env, stdout: "ignore", stderr: "ignore" });
  let firstOkMs = Number.NaN;
  try {
    for (let tries = 0; tries < 1000; tries++) {
      if (await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.ok, () => false)) {
        firstOkMs = performance.now() - started;
        break;
      }
      await Bun.sleep(5);
    }
    await Bun.sleep(3000); // idle: boot work done, background timers settled
    return { firstOkMs, idleRssMb: rssMb(server.pid) };
  } finally {
    server.kill("SIGTERM");
    await server.exited;
  }
}

const runs = [];
for (let i = 0; i < starts; i++) runs.push(await startOnce(i));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const size = statSync(bin).size / MB;
console.log(`executable size        ${size.toFixed(1)} MB (target <= 250)`);
console.log(`start to first 200     median ${median(runs.map((r) => r.firstOkMs)).toFixed(0)} ms, max ${Math.max(...runs.map((r) => r.firstOkMs)).toFixed(0)} ms over ${starts} fresh data dirs (target <= 1000)`);
console.log(`idle RSS, no models    median ${median(runs.map((r) => r.idleRssMb)).toFixed(0)} MB, max ${Math.max(...runs.map((r) => r.idleRssMb)).toFixed(0)} MB (target <= 150)`);
rmSync(work, { recursive: true, force: true });
