// bench/transcribe.ts: wall time of our transcriber (WhisperTranscriber, on the build it picks
// for the CPU: Parley's addon compiled for this machine, decision 046) on a 60 s clip vs
// whisper.cpp's own command-line program built from the same whisper.cpp sources with the same
// flags: same model, same audio, same threads and the same decoding parameters on both sides,
// a fresh model load per run on both sides (target <= 1.05x); then the delay from
// upload-complete to transcription.started on a real server (target < 500 ms).
// Decoding is compared twice: greedy without temperature fallback (deterministic, so both
// sides do the same work), and whisper.cpp's defaults (best of 5, fallback in 0.2 steps). A
// random-weight model fails every decode check, so with fallback both sides sample at rising
// temperatures and may draw different samples: that row compares the same settings, not
// necessarily the same amount of work.
// Usage: bun bench/transcribe.ts [path to whisper-cli] [repetitions of the greedy row, default 3]
// Building the CLI beside the addon (offline, same sources and flags; a few minutes on 2 cores):
//   npm run build:whisper -- --cli
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { ensureTestModels } from "../scripts/test-models/cache";
import { SingleSpeakerDiarizer } from "../src/engines/diarizer";
import { SileroVad } from "../src/engines/vad";
import { NATIVE_WHISPER } from "../src/engines/whisper-native-build";
import { DEFAULT_DECODING, type WhisperDecoding } from "../src/engines/whisper-runner";
import { WhisperTranscriber } from "../src/engines/whisper-transcriber";
import { transcribePcm } from "../src/modules/transcriptions/pipeline";
import { voicedBurst, wavBytes } from "../test/engines/signals";
import { startBenchServer } from "./support/bench-server";

const cli = process.argv[2] ?? NATIVE_WHISPER.cli;
const repetitions = Number(process.argv[3] ?? 3);
const threads = Math.min(8, availableParallelism());
const models = ensureTestModels();
const work = mkdtempSync(join(tmpdir(), "parley-bench-transcribe-"));

/** 60 s of speech-like bursts separated by pauses, like a conversation. */
function clip(seconds: number): Float32Array {
  const pcm = new Float32Array(seconds * 16_000);
  for (let t = 0; t < seconds; t += 10) pcm.set(voicedBurst(8, 0, 8).subarray(0, Math.min(8, seconds - t) * 16_000), t * 16_000);
  return pcm;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const ms = (x: number) => `${x.toFixed(0)} ms`;

/** Ours, as the CLI runs: a fresh engine (model load included), one call; then the same engine again (warm). */
async function timeOurs(pcm: Float32Array, decoding: WhisperDecoding): Promise<{ cold: number; warm: number }> {
  const t = new WhisperTranscriber({ model: "tiny", path: models.whisper, gpu: "off", threads, decoding });
  const t0 = performance.now();
  await t.transcribe(pcm, { language: "en" });
  const cold = performance.now() - t0;
  const t1 = performance.now();
  await t.transcribe(pcm, { language: "en" });
  return { cold, warm: performance.now() - t1 };
}

/** The CLI with the same decoding: -bs 1 is greedy (the binding's only strategy), -tpi 0 turns fallback off. */
async function timeCli(wav: string, decoding: WhisperDecoding): Promise<number> {
  const args = [
    "-m",
    models.whisper,
    "-f",
    wav,
    "-l",
    "en",
    "-t",
    String(threads),
    "-bs",
    "1",
    "-bo",
    String(decoding.bestOf),
    "-tp",
    String(decoding.temperature),
    "-tpi",
    String(decoding.temperatureInc),
    "-np",
  ];
  const t0 = performance.now();
  const proc = Bun.spawn([cli, ...args], { stdout: "ignore", stderr: "pipe" });
  const [stderr, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) throw new Error(`${cli} failed: ${stderr.split("\n").slice(-3).join(" ")}`);
  return performance.now() - t0;
}

/** The whole pipeline on the clip (Silero VAD, the speech alone decoded, decision 100; confidence), for reference. */
async function timePipeline(pcm: Float32Array, decoding: WhisperDecoding): Promise<number> {
  const engines = {
    transcriber: new WhisperTranscriber({ model: "tiny", path: models.whisper, gpu: "off", threads, decoding }),
    vad: new SileroVad(),
    diarizer: new SingleSpeakerDiarizer(),
  };
  const t0 = performance.now();
  await transcribePcm(engines, pcm, { language: "en", signal: new AbortController().signal });
  return performance.now() - t0;
}

async function transcriberFigures() {
  const pcm = clip(60);
  const wav = join(work, "clip-60s.wav");
  writeFileSync(wav, wavBytes(pcm));
  const haveCli = existsSync(cli);
  const build = new WhisperTranscriber({ model: "tiny", path: models.whisper, gpu: "off" });
  await build.load();
  console.log(
    `transcriber: 60 s clip, generated tiny ggml model (${models.whisper}), ${threads} threads, ${repetitions} runs, medians; ours runs on the ${await build.backend()} build`,
  );
  const settings: [string, WhisperDecoding][] = [
    ["greedy, no temperature fallback", { ...DEFAULT_DECODING, temperatureInc: 0 }],
    ["whisper.cpp defaults (best of 5, fallback +0.2)", DEFAULT_DECODING],
  ];
  for (const [name, decoding] of settings) {
    const ours = { cold: [] as number[], warm: [] as number[] };
    const theirs: number[] = [];
    const deterministic = decoding.temperatureInc === 0;
    // The sampled row is for reference (not the same work on both sides) and takes ~30 s a run: once.
    for (let i = 0; i < (deterministic ? repetitions : 1); i++) {
      // Interleaved so machine noise hits both sides alike.
      const o = await timeOurs(pcm, decoding);
      ours.cold.push(o.cold);
      ours.warm.push(o.warm);
      if (haveCli) theirs.push(await timeCli(wav, decoding));
    }
    console.log(`  ${name}: bestOf ${decoding.bestOf}, temperature ${decoding.temperature}, temperatureInc ${decoding.temperatureInc}`);
    console.log(`    ours, fresh engine incl. model load: ${ms(median(ours.cold))}`);
    console.log(`    ours, warm (model already loaded):   ${ms(median(ours.warm))}`);
    if (deterministic) console.log(`    ours, whole pipeline (VAD + speech):  ${ms(await timePipeline(pcm, decoding))}   (one run, for reference)`);
    if (!haveCli) {
      console.log(`    whisper.cpp CLI: not measured (${cli} not found; see the header of this file to build it)`);
      continue;
    }
    console.log(`    whisper.cpp CLI, process wall time:  ${ms(median(theirs))}`);
    console.log(
      `    ratio ours/CLI (fresh): ${(median(ours.cold) / median(theirs)).toFixed(2)}x${deterministic ? "   (target <= 1.05x)" : "   (sampled: not the same work on both sides)"}`,
    );
    if (deterministic) {
      // Each run beside the CLI run that followed it: the spread says how much of the ratio is machine noise.
      const paired = ours.cold.map((o, i) => o / theirs[i]!).sort((a, b) => a - b);
      console.log(`    per-run ratios (run i vs CLI run i): ${paired.map((r) => r.toFixed(2)).join(" ")}`);
    }
  }
}

/** A real server: create a recording, upload a WAV, complete it, and read when transcription.started was recorded. */
async function pipelineDelay() {
  const { port, key, server } = await startBenchServer(work, { PARLEY_WHISPER_MODEL: models.whisper });
  try {
    const base = `http://127.0.0.1:${port}/v1`;
    const headers = { authorization: `Bearer ${key}`, "content-type": "application/json" };
    const post = async (path: string, body: unknown) => {
      const r = await fetch(`${base}${path}`, { method: "POST", headers, body: JSON.stringify(body) });
      if (r.status >= 300) throw new Error(`POST ${path}: ${r.status} ${await r.text()}`);
      return r.json() as Promise<Record<string, any>>;
    };
    const delays: number[] = [];
    for (let i = 0; i < repetitions; i++) {
      const rec = await post("/recordings", {});
      const url = await post(`/recordings/${rec.id}/upload-url`, { content_type: "audio/wav" });
      const put = await fetch(url.upload_url.replace(/^https?:\/\/[^/]+/, `http://127.0.0.1:${port}`), {
        method: "PUT",
        headers: { "content-type": "audio/wav" },
        body: wavBytes(clip(5)),
      });
      if (put.status !== 200) throw new Error(`PUT: ${put.status} ${await put.text()}`);
      const completedAt = Date.now();
      await post(`/recordings/${rec.id}/upload-complete`, {});
      for (let tries = 0; tries < 200; tries++) {
        const list = (await (await fetch(`${base}/transcriptions?recording_id=${rec.id}`, { headers })).json()) as {
          data?: { created_at: string; started_at: string | null }[];
        };
        const started = list.data?.[0]?.started_at ?? list.data?.[0]?.created_at;
        if (started) {
          delays.push(Date.parse(started) - completedAt);
          break;
        }
        await Bun.sleep(10);
      }
    }
    if (delays.length === 0) throw new Error("no transcription was started");
    console.log(
      `pipeline: upload-complete request sent -> transcription.started (server timestamp), ${delays.length} runs: median ${ms(median(delays))}, max ${ms(Math.max(...delays))}   (target < 500 ms)`,
    );
  } finally {
    server.kill();
    await server.exited;
  }
}

try {
  await transcriberFigures();
  await pipelineDelay().catch((err) => console.log(`pipeline: not measured (${(err as Error).message})`));
} finally {
  rmSync(work, { recursive: true, force: true });
}
