// bench/remote.ts: the remote transcription path (issue 33, decision 188) against the local one,
// on this box, with whisper.cpp's whisper-server built from the sources and flags of Parley's
// addon (npm install builds both):
// - overhead per job: RemoteTranscriber -> whisper-server vs WhisperTranscriber (the addon),
//   same model, same audio, same threads, greedy without fallback on both sides, model loaded
//   on both sides (warm), interleaved runs, medians; target <= 1.10x;
// - throughput: hours of audio per wall hour through a real `parley serve` (upload, decoding,
//   voice detection, diarization, the transcription job) with PARLEY_TRANSCRIBER=openai_compatible
//   against one whisper-server, with PARLEY_REMOTE_CONCURRENCY 1 and 4.
// The model is the base.en-shaped stand-in (random weights, 100 tokens per 30 s window, as in
// bench/pipeline.ts); --tiny uses the tiny test model for a quick run.
// Usage: bun bench/remote.ts [--seconds 30] [--runs 3] [--jobs 4] [--threads 2] [--tiny] [--skip overhead,throughput]
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { ensureShapedWhisperModel, ensureTestModels } from "../scripts/test-models/cache";
import { RemoteTranscriber } from "../src/engines/remote-transcriber";
import { WhisperTranscriber } from "../src/engines/whisper-transcriber";
import { startWhisperServer } from "../test/support/whisper-server";
import { wavBytes } from "../test/engines/signals";
import { benchApi, startBenchServer } from "./support/bench-server";
import { conversationClip } from "./support/conversation";

const { values: flags } = parseArgs({
  options: {
    seconds: { type: "string", default: "30" },
    runs: { type: "string", default: "3" },
    jobs: { type: "string", default: "4" },
    threads: { type: "string", default: "2" },
    tiny: { type: "boolean", default: false },
    skip: { type: "string", default: "" },
  },
});
const seconds = Number(flags.seconds);
const threads = Number(flags.threads);
const skip = new Set(flags.skip.split(",").filter(Boolean));
const model = flags.tiny ? ensureTestModels().whisper : ensureShapedWhisperModel("base.en", "f16", 100);
const modelName = flags.tiny ? "tiny test model" : "base.en f16 stand-in";
const work = mkdtempSync(join(tmpdir(), "parley-bench-remote-"));
const pcm = conversationClip(seconds / 60).pcm;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const load = () => `load ${loadavg()[0]!.toFixed(1)}`;

// Greedy, no temperature fallback: deterministic, so both sides do the same work. The random
// weights fail whisper.cpp's log-probability check on every window, so with the fallback on a
// window is decoded up to six times, sampling 5 candidates each, and the times say nothing.
// whisper-server ignores its -nf flag: the request's temperature_inc=0 turns the fallback off
// (PARLEY_TRANSCRIBER_TEMPERATURE_INC, decision 197). -bo 5: the local best_of.
// -nlp: no language probabilities, an extra encoder pass whisper-server makes for verbose_json by default.
const server = await startWhisperServer(model, threads, ["-bo", "5", "-nlp"]);
const remote = new RemoteTranscriber({ baseUrl: server.url, model: modelName, timeoutMs: 3_600_000, temperatureInc: 0 }, { concurrency: 1, retryDelaysMs: [] });
// whisper.cpp's first run is slower (buffers, threads, pages); the server's is done here, untimed,
// and the addon's with its model load in overhead().
const oneSecond = pcm.subarray(0, 16_000);
await remote.transcribe(oneSecond, { language: "en" });

async function overhead() {
  const local = new WhisperTranscriber({ model: modelName, path: model, gpu: "off", threads, decoding: { bestOf: 5, temperature: 0, temperatureInc: 0 } });
  await local.transcribe(oneSecond, { language: "en" }); // loads the model, as the server did at start, and makes the first run
  const times = { local: [] as number[], remote: [] as number[] };
  for (let i = 0; i < Number(flags.runs); i++) {
    for (const [side, engine] of [
      ["local", local],
      ["remote", remote],
    ] as const) {
      const t0 = performance.now();
      await engine.transcribe(pcm, { language: "en" });
      times[side].push(performance.now() - t0);
    }
  }
  const ratio = median(times.remote) / median(times.local);
  console.log(`overhead per job: ${seconds} s clip, ${modelName}, ${threads} threads, ${flags.runs} runs interleaved, medians, ${load()}`);
  console.log(
    `  local (addon, ${await local.backend()}): ${(median(times.local) / 1000).toFixed(2)} s   [${times.local.map((t) => (t / 1000).toFixed(2)).join(" ")}]`,
  );
  console.log(
    `  remote (whisper-server over HTTP):     ${(median(times.remote) / 1000).toFixed(2)} s   [${times.remote.map((t) => (t / 1000).toFixed(2)).join(" ")}]`,
  );
  console.log(`  ratio remote/local: ${ratio.toFixed(3)}x   (target <= 1.10x)`);
}

/** `jobs` recordings uploaded at once to a real server; seconds from the first upload-complete to the last transcription completed. */
async function throughput(concurrency: number, jobs: number): Promise<number> {
  const {
    port,
    key,
    server: parley,
  } = await startBenchServer(join(work, `c${concurrency}`), {
    PARLEY_TRANSCRIBER: "openai_compatible",
    PARLEY_TRANSCRIBER_BASE_URL: server.url,
    PARLEY_TRANSCRIBER_MODEL: modelName,
    PARLEY_TRANSCRIBER_TEMPERATURE_INC: "0",
    PARLEY_REMOTE_CONCURRENCY: String(concurrency),
    PARLEY_PROCESSING_MIN_SECONDS: "7200",
  });
  try {
    const call = benchApi(port, key);
    const ids: string[] = [];
    for (let i = 0; i < jobs; i++) {
      const rec = await call("POST", "/recordings", {});
      const url = await call("POST", `/recordings/${rec.id}/upload-url`, { content_type: "audio/wav" });
      const put = await fetch(url.upload_url.replace(/^https?:\/\/[^/]+/, `http://127.0.0.1:${port}`), { method: "PUT", body: wavBytes(pcm) });
      if (put.status !== 200) throw new Error(`PUT: ${put.status}`);
      ids.push(rec.id);
    }
    const t0 = performance.now();
    await Promise.all(ids.map((id) => call("POST", `/recordings/${id}/upload-complete`, {})));
    for (const id of ids) {
      for (;;) {
        const [txn] = (await call("GET", `/transcriptions?recording_id=${id}`)).data ?? [];
        if (txn?.status === "failed") throw new Error(`transcription failed: ${txn.error.message}`);
        if (txn?.status === "completed") break;
        await Bun.sleep(100);
      }
    }
    return (performance.now() - t0) / 1000;
  } finally {
    parley.kill();
    await parley.exited;
  }
}

try {
  if (!skip.has("overhead")) await overhead();
  if (!skip.has("throughput")) {
    const jobs = Number(flags.jobs);
    console.log(`throughput: ${jobs} recordings of ${seconds} s uploaded at once to parley serve, one whisper-server (${modelName}, ${threads} threads)`);
    for (const concurrency of [1, 4]) {
      const wall = await throughput(concurrency, jobs);
      console.log(
        `  PARLEY_REMOTE_CONCURRENCY=${concurrency}: ${wall.toFixed(1)} s for ${((jobs * seconds) / 60).toFixed(1)} min of audio = ${((jobs * seconds) / wall).toFixed(2)} hours of audio per hour (${load()})`,
      );
    }
  }
} finally {
  await server.stop();
  rmSync(work, { recursive: true, force: true });
}
