// bench/appliance.ts: the figures of the single executable (issue 15): its size (target
// <= 250 MB), the time from starting `parley serve` on a fresh data dir to the first 200 of
// /healthz (target <= 1 s), and the server's resident memory idle with no models (target
// <= 150 MB). Each start runs in an empty folder with an empty PATH (no ffmpeg), the
// executable copied there alone. Then the time from upload-complete to a completed
// transcription of the same 30 s clip with the same generated tiny model, on the executable
// and on the checkout (`bun src/cli.ts serve`), runs interleaved (target: within 5%).
// Usage: bun bench/appliance.ts [path to an executable; default: build one with scripts/build.ts] [starts, default 5] [transcriptions per side, default 3]
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureTestModels } from "../scripts/test-models/cache";
import { voicedBurst, wavBytes } from "../test/engines/signals";
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

/**
 * Seconds from upload-complete to a completed transcription on a fresh server started by
 * `command`: the first upload (it includes loading the model, and in the executable writing
 * out or hash-checking the runtime folder's files) and a second one.
 */
async function timeTranscription(command: string[], cwd: string, bytes: Uint8Array): Promise<[number, number]> {
  const port = freePort();
  const env = { PATH: "", PARLEY_DATA_DIR: mkdtempSync(join(work, "data-")), PARLEY_PORT: String(port), PARLEY_LOG_LEVEL: "silent", PARLEY_WHISPER_MODEL: ensureTestModels().whisper, PARLEY_GPU: "off" };
  const cli = (args: string[]) => Bun.spawnSync([...command, ...args], { cwd, env, stderr: "inherit" }).stdout.toString();
  cli(["projects", "create", "bench"]);
  const key = JSON.parse(cli(["keys", "create", "--project", "bench", "--mode", "test", "--json"])).key as string;
  const server = Bun.spawn([...command, "serve"], { cwd, env, stdout: "ignore", stderr: "ignore" });
  const base = `http://127.0.0.1:${port}/v1`;
  const api = (method: string, path: string, body?: unknown) =>
    fetch(`${base}${path}`, { method, headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
  try {
    for (let up = false; !up; await Bun.sleep(20)) up = await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.ok, () => false);
    await api("PUT", "/config/project", { auto_summarize: false });
    return [await uploadAndTranscribe(api, bytes), await uploadAndTranscribe(api, bytes)];
  } finally {
    server.kill("SIGTERM");
    await server.exited;
  }
}

async function uploadAndTranscribe(api: (method: string, path: string, body?: unknown) => Promise<Response>, bytes: Uint8Array): Promise<number> {
  {
    const rec = await (await api("POST", "/recordings", {})).json();
    const url = (await (await api("POST", `/recordings/${rec.id}/upload-url`, {})).json()).upload_url;
    await fetch(url, { method: "PUT", body: bytes.slice() });
    const completion = { sha256: new Bun.CryptoHasher("sha256").update(bytes).digest("hex"), file_size_bytes: bytes.length };
    const t0 = performance.now();
    while ((await api("POST", `/recordings/${rec.id}/upload-complete`, completion)).status !== 200) await Bun.sleep(10);
    for (;;) {
      const t = (await (await api("GET", `/transcriptions?recording_id=${rec.id}`)).json()).data?.[0];
      if (t?.status === "completed") return (performance.now() - t0) / 1000;
      if (t?.status === "failed") throw new Error(`transcription failed: ${JSON.stringify(t.error)}`);
      await Bun.sleep(10);
    }
  }
}

const runs = [];
for (let i = 0; i < starts; i++) runs.push(await startOnce(i));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const size = statSync(bin).size / MB;
console.log(`executable size        ${size.toFixed(1)} MB (target <= 250)`);
console.log(`start to first 200     median ${median(runs.map((r) => r.firstOkMs)).toFixed(0)} ms, max ${Math.max(...runs.map((r) => r.firstOkMs)).toFixed(0)} ms over ${starts} fresh data dirs (target <= 1000)`);
console.log(`idle RSS, no models    median ${median(runs.map((r) => r.idleRssMb)).toFixed(0)} MB, max ${Math.max(...runs.map((r) => r.idleRssMb)).toFixed(0)} MB (target <= 150)`);
const clip = wavBytes(voicedBurst(30, 0.5, 29.5));
const exeDir = mkdtempSync(join(work, "exe-"));
copyFileSync(bin, join(exeDir, "parley"));
chmodSync(join(exeDir, "parley"), 0o755);
const times = { exe: [] as [number, number][], checkout: [] as [number, number][] };
for (let i = 0; i < Number(process.argv[4] ?? 3); i++) {
  times.exe.push(await timeTranscription([join(exeDir, "parley")], exeDir, clip));
  times.checkout.push(await timeTranscription([process.execPath, join(root, "src", "cli.ts")], root, clip));
}
console.log(`transcription of a 30 s clip, upload-complete to completed, tiny generated model, both on ${Bun.which("ffmpeg") ? "ffmpeg" : "the built-in decoders"} (target within 5%):`);
for (const [row, which] of [["first upload ", 0], ["second upload", 1]] as const) {
  const [exe, checkout] = [median(times.exe.map((t) => t[which])), median(times.checkout.map((t) => t[which]))];
  console.log(`  ${row}  executable median ${exe.toFixed(2)} s, checkout ${checkout.toFixed(2)} s: ${((exe / checkout - 1) * 100).toFixed(1)}%`);
}
rmSync(work, { recursive: true, force: true });
