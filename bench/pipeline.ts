// bench/pipeline.ts: where users wait, on models of real size. Random-weight stand-ins with
// the exact shapes and tensor types of whisper base.en and small and of the default LLM
// (scripts/test-models; speed depends on shapes and types, not on the weights' values) and a
// conversation-like clip made here (espeak-ng turns, two voices, 35% pauses). It prints:
// - transcription: our engine on the whole file vs whisper.cpp's whisper-cli (same model,
//   audio, threads and decoding; a fresh model load on both sides), target <= 1.02x; our
//   pipeline as the server runs it (Silero VAD, silence skipped, decision 100) vs the CLI on
//   the whole file, target >= 1.3x faster; hours of audio per wall hour;
// - summary generation tokens/s vs node-llama-cpp's bare loop on the Qwen2.5-1.5B-shaped
//   Q4_K_M GGUF with the same grammar, target >= 0.95x, and vs the bare loop without one;
// - upload-complete to searchable on a real server (base.en f16 stand-in);
// - a transcription (2 min of the clip, base.en f16) and a summary started together: on the
//   cores' shared turns (decision 110) vs each engine on its own turns (all cores each, at once);
// - Parakeet (issue 28, bench/support/parakeet.ts): the parakeet-tdt-0.6b-v3-shaped stand-in
//   against whisper small, large-v3-turbo and base.en stand-ins in hours of audio per hour,
//   whole file and silence skipped, and ours against whisper.cpp's parakeet-cli (<= 1.05x).
// Random weights would decode up to 220 tokens per 30 s window (whisper.cpp's cap); the
// stand-ins stop at 100 on both sides, about what a real model decodes for 30 s of
// conversation (scripts/test-models/whisper-ggml.ts, tokensPerWindow).
// Usage: bun bench/pipeline.ts [--minutes 10] [--threads 2] [--runs 1] [--cli PATH]
//          [--models base.en-f16,base.en-q8_0,small-f16] [--skip transcription,summary,searchable,cores,parakeet]
//          [--parakeet-vs small,large-v3-turbo,base.en]
// Short iterations: --minutes 2. The CLI: npm run build:whisper -- --cli (a few minutes).
// large-v3-turbo's stand-in costs about 4x small's: on a shared 2-core box, the Parakeet figures
// alone with --minutes 0.5 --skip transcription,summary,searchable,cores took 25 min (decision 184).
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { ensureShapedGguf, ensureShapedWhisperModel, ensureTestModels } from "../scripts/test-models/cache";
import { SingleSpeakerDiarizer } from "../src/engines/diarizer";
import { SileroVad } from "../src/engines/vad";
import { NATIVE_WHISPER } from "../src/engines/whisper-native-build";
import { DEFAULT_DECODING, type WhisperDecoding } from "../src/engines/whisper-runner";
import { WhisperTranscriber } from "../src/engines/whisper-transcriber";
import type { WhisperFileType } from "../src/model-files/ggml-header";
import { transcribePcm } from "../src/modules/transcriptions/pipeline";
import { planSpeech } from "../src/modules/transcriptions/speech-plan";
import { wavBytes } from "../test/engines/signals";
import { conversationClip } from "./support/conversation";
import { parakeetFigures } from "./support/parakeet";
import { uploadToSearchable } from "./support/searchable";
import { sharedCores } from "./support/shared-cores";
import { summarySpeed } from "./support/summary-speed";

const { values: flags } = parseArgs({
  options: {
    minutes: { type: "string", default: "10" },
    threads: { type: "string", default: "2" },
    runs: { type: "string", default: "1" },
    cli: { type: "string", default: NATIVE_WHISPER.cli },
    models: { type: "string", default: "base.en-f16,base.en-q8_0,small-f16" },
    skip: { type: "string", default: "" },
    "parakeet-vs": { type: "string", default: "small,large-v3-turbo,base.en" },
  },
});
const TOKENS_PER_WINDOW = 100;
const threads = Number(flags.threads);
const skip = new Set(flags.skip!.split(",").filter(Boolean));
/** Greedy without temperature fallback: deterministic, so both sides do the same work (decision 045). */
const decoding: WhisperDecoding = { ...DEFAULT_DECODING, temperatureInc: 0 };
const work = mkdtempSync(join(tmpdir(), "parley-bench-pipeline-"));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const load = () =>
  `load ${loadavg()
    .map((x) => x.toFixed(2))
    .join(" ")}`;

async function timeCli(model: string, wav: string): Promise<number> {
  const args = [
    "-m",
    model,
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
    "0",
    "-np",
  ];
  const t0 = performance.now();
  const proc = Bun.spawn([flags.cli!, ...args], { stdout: "ignore", stderr: "pipe" });
  const [stderr, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) throw new Error(`${flags.cli} failed: ${stderr.split("\n").slice(-3).join(" ")}`);
  return performance.now() - t0;
}

const engine = (path: string) => new WhisperTranscriber({ model: "bench", path, gpu: "off", threads, decoding });

/** Ours on the whole file, as the CLI runs it: a fresh engine (model load included), one call. */
async function timeWhole(path: string, pcm: Float32Array): Promise<number> {
  const t0 = performance.now();
  await engine(path).transcribe(pcm, { language: "en" });
  return performance.now() - t0;
}

/** Ours as the server runs it: a fresh engine, Silero VAD, the speech alone decoded, times mapped back. */
async function timePipeline(path: string, pcm: Float32Array): Promise<number> {
  const engines = { transcriber: engine(path), vad: new SileroVad(), diarizer: new SingleSpeakerDiarizer() };
  const t0 = performance.now();
  await transcribePcm(engines, pcm, { language: "en", signal: new AbortController().signal });
  return performance.now() - t0;
}

async function transcription(pcm: Float32Array, wav: string, name: string) {
  const [shape, fileType] = name.split("-") as ["base.en" | "small", WhisperFileType];
  const path = ensureShapedWhisperModel(shape, fileType, TOKENS_PER_WINDOW);
  const cli: number[] = [];
  const whole: number[] = [];
  const skipped: number[] = [];
  const audioHours = pcm.length / 16_000 / 3600;
  const perHour = (ms: number) => `${(audioHours / (ms / 3_600_000)).toFixed(2)} h of audio per hour`;
  console.log(`  ${name} (${TOKENS_PER_WINDOW} tokens per 30 s window at most, both sides; random weights):`);
  // Interleaved, so machine noise hits every side alike; each time printed as it is measured (a slow box takes minutes a run).
  for (let i = 0; i < Number(flags.runs); i++) {
    cli.push(await timeCli(path, wav));
    console.log(`    run ${i + 1}: whisper-cli whole file ${s(cli.at(-1)!)}, ${load()}`);
    whole.push(await timeWhole(path, pcm));
    console.log(`    run ${i + 1}: ours whole file ${s(whole.at(-1)!)}, ${load()}`);
    skipped.push(await timePipeline(path, pcm));
    console.log(`    run ${i + 1}: ours pipeline, silence skipped ${s(skipped.at(-1)!)}, ${load()}`);
  }
  console.log(`    medians of ${flags.runs}: whisper-cli whole file ${s(median(cli))} (${perHour(median(cli))})`);
  console.log(`    ours whole file ${s(median(whole))}: ratio ours/CLI ${(median(whole) / median(cli)).toFixed(2)}x   (target <= 1.02x)`);
  console.log(
    `    ours, silence skipped ${s(median(skipped))}: ${(median(cli) / median(skipped)).toFixed(2)}x faster than the CLI on the whole file (target >= 1.3x); ${perHour(median(skipped))} on ${threads} threads`,
  );
}

async function main() {
  const minutes = Number(flags.minutes);
  const generated = conversationClip(minutes);
  const wav = join(work, "conversation.wav");
  writeFileSync(wav, wavBytes(generated.pcm));
  // Ours gets the samples the CLI reads from the 16-bit WAV: on random weights a difference in
  // the last bit can change a timestamp, and so where whisper seeks and how much it decodes.
  const clip = { ...generated, pcm: Float32Array.from(generated.pcm, (x) => Math.max(-32768, Math.min(32767, Math.round(x * 32767))) / 32768) };
  const speech = await new SileroVad().analyse(clip.pcm);
  const plan = planSpeech(speech.regions, clip.seconds);
  console.log(
    `clip: ${minutes} min conversation (espeak-ng, two voices), ${((1 - clip.speechSeconds / clip.seconds) * 100).toFixed(0)}% pauses; Silero + padding: ${(plan.speechFraction * 100).toFixed(0)}% speech, decoded as ${plan.mode === "whole" ? "the whole file" : `${plan.seconds.toFixed(0)} s of speech`}`,
  );
  console.log(
    `transcription: ${threads} threads, greedy without temperature fallback; ${existsSync(flags.cli!) ? flags.cli : "NO whisper-cli (npm run build:whisper -- --cli)"}`,
  );
  if (existsSync(flags.cli!) && !skip.has("transcription")) for (const name of flags.models!.split(",")) await transcription(clip.pcm, wav, name);

  if (!skip.has("parakeet")) {
    if (!existsSync(NATIVE_WHISPER.parakeetCli)) console.log("Parakeet: NO parakeet-cli (npm run build:whisper -- --cli)");
    else {
      console.log(`Parakeet (issue 28): ${threads} threads, ${load()}`);
      const whisperShapes = flags["parakeet-vs"]!.split(",").filter(Boolean) as ("small" | "large-v3-turbo" | "base.en")[];
      await parakeetFigures(clip.pcm, wav, { threads, decoding, tokensPerWindow: TOKENS_PER_WINDOW, whisperShapes, log: console.log });
    }
  }

  if (!skip.has("summary")) {
    const gguf = ensureShapedGguf();
    const r = await summarySpeed(gguf);
    const fmt = (x: { perSecond: number; tokens: number; seconds: number }) =>
      `${x.perSecond.toFixed(2)} tok/s (${x.tokens} tokens in ${x.seconds.toFixed(1)} s)`;
    console.log(`summary generation, Qwen2.5-1.5B-shaped Q4_K_M GGUF, ${r.threads} threads, median of 3, ${load()}:`);
    console.log(`    ours (chat wrapper, the template's JSON-schema grammar): ${fmt(r.ours)}`);
    console.log(
      `    node-llama-cpp bare loop, same grammar:                  ${fmt(r.bareWithGrammar)}   ratio ${(r.ours.perSecond / r.bareWithGrammar.perSecond).toFixed(2)}x (target >= 0.95x)`,
    );
    console.log(
      `    node-llama-cpp bare loop, no grammar:                    ${fmt(r.bareWithoutGrammar)}   ratio ${(r.ours.perSecond / r.bareWithoutGrammar.perSecond).toFixed(2)}x`,
    );
    console.log(
      "    (node-llama-cpp checks the top token alone and filters the whole 152k vocabulary only when it breaks the schema; random weights break it often, a real model seldom)",
    );
  }

  if (!skip.has("searchable")) {
    const whisper = ensureShapedWhisperModel("base.en", "f16", TOKENS_PER_WINDOW);
    const r = await uploadToSearchable(work, clip.pcm, { whisper, gguf: ensureTestModels().gguf });
    console.log(
      `upload-complete -> searchable (real server, base.en f16 stand-in, ${minutes} min clip, ${load()}): ${s(r.ms)} (transcript completed at ${s(r.transcribedMs)})`,
    );
  }

  if (!skip.has("cores")) {
    const whisper = ensureShapedWhisperModel("base.en", "f16", TOKENS_PER_WINDOW);
    const excerpt = clip.pcm.subarray(0, Math.min(clip.pcm.length, 120 * 16_000));
    const r = await sharedCores(whisper, ensureShapedGguf(), excerpt, { threads, decoding, runs: Number(flags.runs) });
    const row = (name: string, t: { transcription: number; summary: number; both: number }) =>
      `    ${name}: transcription ${s(t.transcription)}, summary ${s(t.summary)}, both done ${s(t.both)}`;
    console.log(
      `a transcription (${(excerpt.length / 16_000 / 60).toFixed(0)} min, base.en f16) and a summary (Qwen2.5-1.5B Q4_K_M, 64 tokens) started together, medians of ${flags.runs}, ${load()}:`,
    );
    console.log(row("one after the other (reference)", r.alone));
    console.log(row("each engine on its own turns, at once (before)", r.ownTurns));
    console.log(row("the cores' shared turns (ours)", r.sharedTurns));
    console.log(
      `    both done: ${(r.ownTurns.both / r.sharedTurns.both).toFixed(2)}x sooner on shared turns; the first done ${(Math.min(r.ownTurns.transcription, r.ownTurns.summary) / Math.min(r.sharedTurns.transcription, r.sharedTurns.summary)).toFixed(2)}x sooner`,
    );
  }
}

try {
  await main();
} finally {
  rmSync(work, { recursive: true, force: true });
}
