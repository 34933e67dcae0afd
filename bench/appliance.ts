// bench/appliance.ts: the figures of the single executable (issue 15): its size (target
// <= 250 MB), the time from starting `parley serve` on a fresh data dir to the first 200 of
// /healthz (target <= 1 s), and the server's resident memory idle with no models (target
// <= 150 MB). Each start runs in an empty folder with an empty PATH (no ffmpeg), the
// executable copied there alone. Then the time from upload-complete to a completed
// transcription of the same 30 s clip with the same generated tiny model, and a summary of it
// on the tiny GGUF (llama.cpp), on the executable and on the checkout (`bun src/cli.ts serve`),
// fresh servers interleaved over several repetitions (target: transcription within 5%).
// Usage: bun bench/appliance.ts [path to an executable; default: build one with scripts/build.ts] [starts, default 5] [repetitions, default 5]
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
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
      if (
        await fetch(`http://127.0.0.1:${port}/healthz`).then(
          (r) => r.ok,
          () => false,
        )
      ) {
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

type Api = (method: string, path: string, body?: unknown) => Promise<Response>;
/** Wall and CPU seconds of one piece of work. */
type Timed = { wall: number; cpu: number };
/** One fresh server's times: the first upload, the warm ones, the first summary and a warm one. */
type ServerTimes = { cold: Timed; warm: Timed[]; summaryCold: Timed; summaryWarm: Timed };

/** CPU seconds (user and system, all threads) a process has used so far. */
function cpuSeconds(pid: number): number {
  // Fields after the command's closing parenthesis: utime and stime are the 12th and 13th.
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100; // USER_HZ is 100 on Linux
}

/** Runs `work` and measures its wall time and the CPU time the server used meanwhile. */
async function timed(pid: number, work: () => Promise<unknown>): Promise<Timed> {
  const [t0, c0] = [performance.now(), cpuSeconds(pid)];
  await work();
  return { wall: (performance.now() - t0) / 1000, cpu: cpuSeconds(pid) - c0 };
}

/**
 * Times on a fresh server started by `command`: upload-complete to a completed transcription,
 * first (it includes loading the model, and in the executable writing out or hash-checking
 * the runtime folder's files) then `warmUploads` more; then a summary of the last
 * transcription on the tiny GGUF, first (loading llama.cpp) and again.
 */
async function timeServer(command: string[], cwd: string, bytes: Uint8Array, warmUploads: number): Promise<ServerTimes> {
  const port = freePort();
  const models = ensureTestModels();
  const env = {
    PATH: "",
    PARLEY_DATA_DIR: mkdtempSync(join(work, "data-")),
    PARLEY_PORT: String(port),
    PARLEY_LOG_LEVEL: "silent",
    PARLEY_WHISPER_MODEL: models.whisper,
    PARLEY_LLM_MODEL: models.gguf,
    PARLEY_GPU: "off",
  };
  const cli = (args: string[]) => Bun.spawnSync([...command, ...args], { cwd, env, stderr: "inherit" }).stdout.toString();
  cli(["projects", "create", "bench"]);
  const key = JSON.parse(cli(["keys", "create", "--project", "bench", "--mode", "test", "--json"])).key as string;
  const server = Bun.spawn([...command, "serve"], { cwd, env, stdout: "ignore", stderr: "ignore" });
  const base = `http://127.0.0.1:${port}/v1`;
  const api: Api = (method, path, body) =>
    fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  try {
    for (let up = false; !up; await Bun.sleep(20))
      up = await fetch(`http://127.0.0.1:${port}/healthz`).then(
        (r) => r.ok,
        () => false,
      );
    await api("PUT", "/config/project", { auto_summarize: false });
    let transcriptionId = "";
    const transcribe = async () => {
      const rec = await uploaded(api, bytes);
      return timed(server.pid, async () => (transcriptionId = await uploadAndTranscribe(api, rec)));
    };
    const cold = await transcribe();
    const warm: Timed[] = [];
    for (let i = 0; i < warmUploads; i++) warm.push(await transcribe());
    const summary = () => summarise(api, transcriptionId);
    return { cold, warm, summaryCold: await timed(server.pid, summary), summaryWarm: await timed(server.pid, summary) };
  } finally {
    server.kill("SIGTERM");
    await server.exited;
  }
}

/** Polls `read` until it answers a finished resource, and returns it. */
async function finished<T extends { status: string; error?: unknown }>(read: () => Promise<T | undefined>): Promise<T> {
  for (;;) {
    const r = await read();
    if (r?.status === "completed") return r;
    if (r?.status === "failed") throw new Error(`failed: ${JSON.stringify(r.error)}`);
    await Bun.sleep(10);
  }
}

/** A recording with the bytes PUT, not yet completed (the timed part starts at upload-complete); its id. */
async function uploaded(api: Api, bytes: Uint8Array): Promise<{ id: string; bytes: Uint8Array }> {
  const rec = await (await api("POST", "/recordings", {})).json();
  const url = (await (await api("POST", `/recordings/${rec.id}/upload-url`, {})).json()).upload_url;
  await fetch(url, { method: "PUT", body: bytes.slice() });
  return { id: rec.id, bytes };
}

/** upload-complete, then waits for the completed transcription; its id. */
async function uploadAndTranscribe(api: Api, rec: { id: string; bytes: Uint8Array }): Promise<string> {
  const completion = { sha256: new Bun.CryptoHasher("sha256").update(rec.bytes).digest("hex"), file_size_bytes: rec.bytes.length };
  while ((await api("POST", `/recordings/${rec.id}/upload-complete`, completion)).status !== 200) await Bun.sleep(10);
  return (await finished(async () => (await (await api("GET", `/transcriptions?recording_id=${rec.id}`)).json()).data?.[0])).id;
}

async function summarise(api: Api, transcriptionId: string): Promise<void> {
  const posted = await (await api("POST", "/summaries", { transcription_id: transcriptionId })).json();
  await finished(async () => (await api("GET", `/summaries/${posted.id}`)).json());
}

const runs = [];
for (let i = 0; i < starts; i++) runs.push(await startOnce(i));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const size = statSync(bin).size / MB;
console.log(`executable size        ${size.toFixed(1)} MB (target <= 250)`);
console.log(
  `start to first 200     median ${median(runs.map((r) => r.firstOkMs)).toFixed(0)} ms, max ${Math.max(...runs.map((r) => r.firstOkMs)).toFixed(0)} ms over ${starts} fresh data dirs (target <= 1000)`,
);
console.log(
  `idle RSS, no models    median ${median(runs.map((r) => r.idleRssMb)).toFixed(0)} MB, max ${Math.max(...runs.map((r) => r.idleRssMb)).toFixed(0)} MB (target <= 150)`,
);
const clip = wavBytes(voicedBurst(30, 0.5, 29.5));
const exeDir = mkdtempSync(join(work, "exe-"));
copyFileSync(bin, join(exeDir, "parley"));
chmodSync(join(exeDir, "parley"), 0o755);
const sides = { executable: [join(exeDir, "parley")], checkout: [process.execPath, join(root, "src", "cli.ts")] };
const reps = Number(process.argv[4] ?? 5);
const warmUploads = 3;
const times = { executable: [] as ServerTimes[], checkout: [] as ServerTimes[] };
const loadBefore = loadavg()[0]!;
/** The median of each warm upload's wall and CPU time. */
const warmMedian = (t: ServerTimes): Timed => ({ wall: median(t.warm.map((w) => w.wall)), cpu: median(t.warm.map((w) => w.cpu)) });
// Interleaved, and each repetition swaps which side goes first, so a change in the machine's
// load over the run falls on both sides alike.
for (let i = 0; i < reps; i++) {
  for (const side of i % 2 === 0 ? (["executable", "checkout"] as const) : (["checkout", "executable"] as const)) {
    times[side].push(await timeServer(sides[side], side === "executable" ? exeDir : root, clip, warmUploads));
  }
  // Each repetition as it ends, so a run cut short still says something.
  const [e, c] = [times.executable[i]!, times.checkout[i]!];
  console.log(
    `repetition ${i + 1}: warm transcription cpu ${warmMedian(e).cpu.toFixed(2)} s executable, ${warmMedian(c).cpu.toFixed(2)} s checkout (wall ${warmMedian(e).wall.toFixed(2)}, ${warmMedian(c).wall.toFixed(2)}); load ${loadavg()[0]!.toFixed(1)}`,
  );
}
const pct = (ratio: number) => `${ratio >= 1 ? "+" : ""}${((ratio - 1) * 100).toFixed(1)}%`;
/**
 * Wall and CPU seconds per side (medians over repetitions) and the median of the
 * per-repetition ratios with their range. CPU time is what a busy machine disturbs least.
 */
function compare(label: string, figure: (t: ServerTimes) => Timed): void {
  for (const kind of ["wall", "cpu"] as const) {
    const [exe, checkout] = [times.executable.map((t) => figure(t)[kind]), times.checkout.map((t) => figure(t)[kind])];
    const ratios = exe.map((e, i) => e / checkout[i]!);
    console.log(
      `  ${(kind === "wall" ? label : "").padEnd(32)} ${kind.padEnd(4)} executable ${median(exe).toFixed(2)} s, checkout ${median(checkout).toFixed(2)} s: ${pct(median(ratios))} (per repetition ${pct(Math.min(...ratios))} to ${pct(Math.max(...ratios))})`,
    );
  }
}
console.log(
  `executable against checkout, same audio and models, both on the built-in decoders (empty PATH), ${reps} interleaved repetitions (target: transcription within 5%):`,
);
compare("first transcription (cold)", (t) => t.cold);
compare(`transcription (${warmUploads} warm, median)`, warmMedian);
compare("first summary (loads llama.cpp)", (t) => t.summaryCold);
compare("summary (warm)", (t) => t.summaryWarm);
console.log(`load average ${loadBefore.toFixed(2)} before, ${loadavg()[0]!.toFixed(2)} after, ${cpus().length} cores`);
rmSync(work, { recursive: true, force: true });
