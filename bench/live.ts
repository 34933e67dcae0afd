// bench/live.ts: live transcription of a streamed recording (issue 30), on a real server
// (`parley serve` in a child process) with random-weight stand-ins of real shape (whisper
// base.en f16, the Qwen2.5-1.5B-shaped GGUF; scripts/test-models) on a conversation-like clip
// (espeak-ng turns, two voices, 35% pauses). It prints:
// - the lag of the live transcript behind the audio received while streaming (p50, p95): for
//   each segment, from the PUT of the chunk that holds its end to its arrival over
//   GET /transcriptions/{id}/live (target <= 5 s);
// - upload-complete 200 -> transcription.completed and -> summary.completed for the streamed
//   recording, and for the same recording uploaded whole, in the same run (targets <= 10 s, <= 45 s).
// - the most concurrent streams kept live: n recordings (the first --trial-minutes of the clip)
//   streamed at once, n = 1, 2, 4, ... up to --max-streams, until the lag p95 over all of
//   them passes 5 s or a stream gets under 80% of the segments one stream alone gets.
// Usage: bun bench/live.ts [--minutes 10] [--chunk-kb 256] [--speed 1] [--trial-minutes 2] [--max-streams 8]
//          [--skip completion,concurrency,summary] [--quant q4_0|q4_k_m] (the LLM file's types, default q4_0 as the server's, decisions 233, 235) (threads: the engines' own choice, all cores)
// --skip summary turns automatic summaries off and stops each completion at
// transcription.completed (a summary is the LLM's time: minutes with the random-weight
// stand-in on a busy box, which the next measurement would wait for or share the cores with).
// --speed 4 streams four times faster than real time (reported as such): short runs only.
// Each lag line is followed by its breakdown: the segments whose region's closing quiet
// (CLOSING_QUIET_SECONDS after its end, by Silero over the whole clip), the first pause of
// as much quiet after them in their region (decision 211), and the edge cut (decision 234: the
// region has run EDGE_CUT_MIN_SECONDS at the edge of a chunk after the first) all fall in a later
// chunk than their end, which wait for that chunk by the rule that a region is transcribed once closed (and how
// many of them lie in a region whose speech itself runs on into that chunk; and how many the
// closing quiet alone, the rule before decision 211, would hold), and the lag of all from the
// PUT of the chunk that closes their region (the pass's own time). Then the lag by speech region:
// from the PUT of the chunk holding a VAD region's end to the arrival of the region's last segment.
import { mkdtempSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { ensureShapedGguf, ensureShapedWhisperModel } from "../scripts/test-models/cache";
import { type SpeechAnalysis, SileroVad } from "../src/engines/vad";
import { CLOSING_QUIET_SECONDS, EDGE_CUT_MIN_SECONDS, pausesIn } from "../src/modules/live/regions";
import { wavBytes } from "../test/engines/signals";
import { startBenchServer } from "./support/bench-server";
import { conversationClip } from "./support/conversation";

const { values: flags } = parseArgs({
  options: {
    minutes: { type: "string", default: "10" },
    "chunk-kb": { type: "string", default: "256" },
    speed: { type: "string", default: "1" },
    "trial-minutes": { type: "string", default: "2" },
    "max-streams": { type: "string", default: "8" },
    skip: { type: "string", default: "" },
    quant: { type: "string", default: "q4_0" },
  },
});
const skip = new Set(flags.skip!.split(",").filter(Boolean));
const speed = Number(flags.speed);
const chunkBytes = Number(flags["chunk-kb"]) * 1024;
const BYTES_PER_SECOND = 16_000 * 2; // the clip's WAV: 16 kHz mono 16-bit
const s = (ms: number) => (Number.isNaN(ms) ? "not measured (--skip)" : `${(ms / 1000).toFixed(1)} s`);
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))] ?? Number.NaN;
const work = mkdtempSync(join(tmpdir(), "parley-bench-live-"));

async function main() {
  const minutes = Number(flags.minutes);
  const clip = conversationClip(minutes);
  const wav = wavBytes(clip.pcm);
  const { port, key, server } = await startBenchServer(
    work,
    {
      PARLEY_WHISPER_MODEL: ensureShapedWhisperModel("base.en", "f16", 100),
      PARLEY_LLM_MODEL: ensureShapedGguf(`qwen2.5-1.5b-${flags.quant as "q4_k_m" | "q4_0"}`),
      PARLEY_GPU: "off",
      PARLEY_PROCESSING_MIN_SECONDS: "7200",
      // Greedy, as bench/pipeline.ts decodes: random weights would fail every temperature step.
    },
    [join(import.meta.dir, "..", "scripts", "test-models", "serve-greedy.ts")],
  );
  const base = `http://127.0.0.1:${port}/v1`;
  const headers = { authorization: `Bearer ${key}`, "content-type": "application/json" };
  const call = async (method: string, path: string, body?: unknown) => {
    const r = await fetch(`${base}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    if (r.status >= 300 && r.status !== 425) throw new Error(`${method} ${path}: ${r.status} ${await r.text()}`);
    return { status: r.status, body: (await r.json()) as Record<string, any> };
  };
  const putBytes = async (id: string, bytes: Uint8Array<ArrayBuffer>, chunk?: number) => {
    const url = (await call("POST", `/recordings/${id}/upload-url`, { content_type: "audio/wav", ...(chunk === undefined ? {} : { chunk_index: chunk }) }))
      .body;
    const put = await fetch(url.upload_url.replace(/^https?:\/\/[^/]+/, `http://127.0.0.1:${port}`), {
      method: "PUT",
      headers: { "content-type": "audio/wav" },
      body: bytes,
    });
    if (put.status !== 200) throw new Error(`PUT: ${put.status} ${await put.text()}`);
  };
  /** upload-complete until 200 (425 while verifying), then until the transcription and the summary complete: ms from the 200. */
  const uploadComplete = async (id: string, bytes: Uint8Array) => {
    const sha256 = new Bun.CryptoHasher("sha256").update(bytes).digest("hex");
    while ((await call("POST", `/recordings/${id}/upload-complete`, { sha256 })).status !== 200) await Bun.sleep(100);
  };
  const complete = async (id: string) => {
    await uploadComplete(id, wav);
    const t0 = performance.now();
    let transcribed = 0;
    // Polled, not slept on: each poll is a real request, and the wait ends when the state is reached.
    for (;;) {
      const txn = (await call("GET", `/transcriptions?recording_id=${id}`)).body.data?.[0];
      if (txn?.status === "failed") throw new Error(`transcription failed: ${JSON.stringify(txn.error)}`);
      if (txn?.status === "completed") {
        transcribed ||= performance.now() - t0;
        if (skip.has("summary") || skip.has("summary-wait")) return { transcribed, summarised: Number.NaN };
        const sum = (await call("GET", `/summaries?transcription_id=${txn.id}`)).body.data?.[0];
        if (sum?.status === "completed") return { transcribed, summarised: performance.now() - t0 };
        if (sum?.status === "failed") throw new Error(`summary failed: ${JSON.stringify(sum.error)}`);
      }
      await Bun.sleep(100);
    }
  };

  /**
   * Streams `bytes` as a new recording, each chunk PUT when its audio would have been
   * recorded, reading its live stream meanwhile: the recording's id, and each segment's lag
   * (ms from the PUT of the chunk holding its end to its arrival) once the stream has ended.
   */
  const stream = async (bytes: Uint8Array<ArrayBuffer>) => {
    const id = (await call("POST", "/recordings", {})).body.id as string;
    const putAt: { endSeconds: number; at: number }[] = [];
    const lags: number[] = [];
    const arrivals: { end: number; at: number }[] = [];
    const start = performance.now();
    let watching: Promise<void> | null = null;
    for (let i = 0, offset = 0; offset < bytes.length; i++, offset += chunkBytes) {
      const end = Math.min(bytes.length, offset + chunkBytes);
      const due = start + ((end / BYTES_PER_SECOND) * 1000) / speed;
      await Bun.sleep(Math.max(0, due - performance.now()));
      await putBytes(id, bytes.slice(offset, end), i);
      putAt.push({ endSeconds: end / BYTES_PER_SECOND, at: performance.now() });
      watching ??= watchLive(base, key, id, (segmentEnd) => {
        const chunk = putAt.find((c) => c.endSeconds >= segmentEnd);
        if (chunk) lags.push(performance.now() - chunk.at);
        arrivals.push({ end: segmentEnd, at: performance.now() });
      });
    }
    return { id, lags, arrivals, putAt, ended: watching ?? Promise.resolve() };
  };

  /** Where the lag comes from (see the header): printed after each lag line. */
  const breakdown = (analysis: SpeechAnalysis, streams: Awaited<ReturnType<typeof stream>>[]) => {
    const { regions, frameSeconds } = analysis;
    const pauses = pausesIn(analysis);
    const held: number[] = [];
    const others: number[] = [];
    const afterClosing: number[] = [];
    // Held segments whose region's speech itself runs on into a later chunk (not only its closing
    // quiet), and the segments the closing quiet alone would have held (before decision 211).
    let runOn = 0;
    let heldByQuiet = 0;
    for (const { arrivals, putAt } of streams)
      for (const a of arrivals) {
        const holding = putAt.findIndex((c) => c.endSeconds >= a.end);
        if (holding < 0) continue;
        // The chunk whose arrival holds `seconds` of audio (the last when none: completion).
        const chunkOf = (seconds: number) => {
          const i = putAt.findIndex((c) => c.endSeconds >= seconds);
          return i < 0 ? putAt.length - 1 : Math.max(holding, i);
        };
        // The region the segment ends in, else the last one ending before it.
        const region = regions.find((r) => r.start <= a.end && a.end <= r.end + 0.5) ?? regions.findLast((r) => r.end <= a.end);
        const regionEnd = region?.end ?? a.end;
        const byQuiet = chunkOf(regionEnd + CLOSING_QUIET_SECONDS);
        // Or the first pause in the region ending after the segment, once a louder frame after it arrived.
        const pause = pauses.find((p) => p.end > a.end && p.start < regionEnd);
        // Or the edge of the chunk holding its end, once the region has run EDGE_CUT_MIN_SECONDS
        // there (decision 234; chunks come a chunk's audio apart, but the first has no wait known).
        const edge = putAt[holding]!.endSeconds;
        const cutAtEdge = holding > 0 && region !== undefined && region.start <= edge - EDGE_CUT_MIN_SECONDS && regionEnd > edge;
        const closedBy = cutAtEdge ? holding : pause ? Math.min(byQuiet, chunkOf(pause.end + frameSeconds)) : byQuiet;
        if (byQuiet > holding) heldByQuiet++;
        (closedBy > holding ? held : others).push(a.at - putAt[holding]!.at);
        if (closedBy > holding && chunkOf(regionEnd) > holding) runOn++;
        afterClosing.push(a.at - putAt[closedBy]!.at);
      }
    // By speech region: a region's text is complete once its last segment arrived; its audio
    // once the chunk holding the region's end was PUT. A trained model ends segments at
    // sentences, near a region's end; the stand-in's random weights end them anywhere in it, and
    // a segment ending before a chunk's edge in a region running past it counts above as held.
    const byRegion: number[] = [];
    for (const { arrivals, putAt } of streams)
      for (const r of regions) {
        const last = arrivals.filter((a) => a.end > r.start && a.end <= r.end + 0.5).at(-1);
        const holding = putAt.find((c) => c.endSeconds >= r.end);
        if (last && holding) byRegion.push(last.at - holding.at);
      }
    const n = held.length + others.length;
    const p = (xs: number[], q: number) => (xs.length ? s(pct(xs, q)) : "none");
    console.log(
      `  breakdown: ${held.length} of ${n} segments (${((100 * held.length) / Math.max(1, n)).toFixed(0)}%) closed by quiet or a pause in a later chunk than their end (${runOn} in a region whose speech runs on into it; ${heldByQuiet} would wait for their region's closing quiet alone), lag p50 ${p(held, 50)}, p95 ${p(held, 95)}; the others p50 ${p(others, 50)}, p95 ${p(others, 95)}; all, from the PUT of the chunk closing their region: p50 ${p(afterClosing, 50)}, p95 ${p(afterClosing, 95)}`,
    );
    console.log(
      `  by speech region: ${byRegion.length} VAD regions with text, from the PUT of the chunk holding the region's end to the arrival of its last segment: p50 ${p(byRegion, 50)}, p95 ${p(byRegion, 95)} (the lag a model ending segments at sentences would show; not the issue's figure)`,
    );
  };
  const analysisOf = (pcm: Float32Array) => new SileroVad().analyse(pcm);

  try {
    if (skip.has("summary")) await call("PUT", "/config/project", { auto_summarize: false });
    // The streamed recording's time to transcription.completed, for the ratio to the whole upload's.
    let streamedTranscribed = Number.NaN;
    console.log(
      `clip: ${minutes} min conversation (espeak-ng, two voices, 35% pauses), ${(wav.length / 1024 / 1024).toFixed(1)} MB WAV in ${flags["chunk-kb"]} KB chunks at ${speed === 1 ? "real-time pace" : `${speed}x real-time pace (compressed)`}; base.en f16 and Qwen2.5-1.5B-shaped ${flags.quant} stand-ins, ${cpus().length} cores, load at start ${loadavg()[0]!.toFixed(2)}`,
    );
    if (!skip.has("completion")) {
      const streamed = await stream(wav);
      const live = await complete(streamed.id);
      streamedTranscribed = live.transcribed;
      console.log(
        `streamed: upload-complete 200 -> transcription.completed ${s(live.transcribed)} (target <= 10 s), -> summary.completed ${s(live.summarised)} (target <= 45 s)`,
      );
      await streamed.ended;
      // Printed once the stream has ended: segments that arrive after the last PUT count too.
      const lags = streamed.lags;
      console.log(
        `live: ${lags.length} provisional segments; lag behind the audio received p50 ${s(pct(lags, 50))}, p95 ${s(pct(lags, 95))} (target <= 5 s), load ${loadavg()[0]!.toFixed(2)}`,
      );
      breakdown(await analysisOf(clip.pcm), [streamed]);
    }
    if (!skip.has("completion") && !skip.has("whole")) {
      const whole = (await call("POST", "/recordings", {})).body.id as string;
      await putBytes(whole, wav);
      const after = await complete(whole);
      console.log(`uploaded whole: upload-complete 200 -> transcription.completed ${s(after.transcribed)}, -> summary.completed ${s(after.summarised)}`);
      console.log(`ratio streamed/whole to transcription.completed: ${(streamedTranscribed / after.transcribed).toFixed(2)}x`);
    }
    if (!skip.has("concurrency")) {
      const trialMinutes = Number(flags["trial-minutes"]);
      const trialClip = conversationClip(trialMinutes);
      const trial = wavBytes(trialClip.pcm);
      const trialAnalysis = await analysisOf(trialClip.pcm);
      let alone = 0;
      let kept = 0;
      for (let n = 1; n <= Number(flags["max-streams"]); n *= 2) {
        const streams = await Promise.all(Array.from({ length: n }, () => stream(trial)));
        // Each live stream ends with its transcription's completed event.
        await Promise.all(streams.map((x) => uploadComplete(x.id, trial)));
        await Promise.all(streams.map((x) => x.ended));
        const lags = streams.flatMap((x) => x.lags);
        const fewest = Math.min(...streams.map((x) => x.lags.length));
        if (n === 1) alone = fewest;
        const live = pct(lags, 95) <= 5000 && fewest >= 0.8 * alone;
        console.log(
          `${n} concurrent ${trialMinutes}-min streams: lag p50 ${s(pct(lags, 50))}, p95 ${s(pct(lags, 95))}; segments per stream ${fewest}..${Math.max(...streams.map((x) => x.lags.length))} (alone ${alone}): ${live ? "kept live" : "fell behind"}, load ${loadavg()[0]!.toFixed(2)}`,
        );
        breakdown(trialAnalysis, streams);
        if (!live) break;
        kept = n;
      }
      console.log(`most concurrent ${speed === 1 ? "real-time" : `${speed}x`} streams kept live: ${kept} (of up to ${flags["max-streams"]} tried)`);
    }
  } finally {
    server.kill();
    await server.exited;
  }
}

/** Reads GET /transcriptions/{id}/live once the transcription exists; calls `onSegment` with each segment's end (s). */
async function watchLive(base: string, key: string, recordingId: string, onSegment: (end: number) => void): Promise<void> {
  const auth = { authorization: `Bearer ${key}` };
  let id: string | undefined;
  while (!id) {
    id = ((await (await fetch(`${base}/transcriptions?recording_id=${recordingId}`, { headers: auth })).json()) as any).data?.[0]?.id;
    if (!id) await Bun.sleep(50);
  }
  const res = await fetch(`${base}/transcriptions/${id}/live`, { headers: auth });
  const reader = res.body!.getReader();
  let buffer = "";
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    buffer += new TextDecoder().decode(value);
    for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      if (/^event: (completed|failed)$/m.test(block)) return;
      const data = block.match(/^event: segment\ndata: (.*)$/m)?.[1];
      if (data) onSegment(JSON.parse(data).end);
    }
  }
}

try {
  await main();
} finally {
  rmSync(work, { recursive: true, force: true });
}
