import { ensureShapedParakeetModel, ensureShapedWhisperModel } from "../../scripts/test-models/cache";
import { SingleSpeakerDiarizer } from "../../src/engines/diarizer";
import { ParakeetTranscriber } from "../../src/engines/parakeet-transcriber";
import type { Transcriber } from "../../src/engines/transcriber";
import { SileroVad } from "../../src/engines/vad";
import { NATIVE_WHISPER } from "../../src/engines/whisper-native-build";
import type { WhisperDecoding } from "../../src/engines/whisper-runner";
import { WhisperTranscriber } from "../../src/engines/whisper-transcriber";
import { transcribePcm } from "../../src/modules/transcriptions/pipeline";

/**
 * Issue 28's figures: hours of audio per wall hour for the parakeet-tdt-0.6b-v3-shaped
 * stand-in against whisper small, large-v3-turbo and base.en stand-ins (f16 all, same clip
 * and threads), on the whole file and with silence skipped as the server does (decision
 * 100); and ours against whisper.cpp's own parakeet-cli on the same file and model.
 * Every engine is fresh per run (model load included, as the CLI's).
 */
export type ParakeetBenchOptions = {
  threads: number;
  decoding: WhisperDecoding;
  /** Whisper's stand-ins stop each 30 s window after this many tokens (bench/pipeline.ts). */
  tokensPerWindow: number;
  log: (line: string) => void;
  /** whisper shapes to compare against; large-v3-turbo's f16 stand-in is 1.6 GB and about 4x small's time (decision 184). */
  whisperShapes: ("small" | "large-v3-turbo" | "base.en")[];
};

async function timed(work: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await work();
  return performance.now() - t0;
}

async function timeParakeetCli(model: string, wav: string, threads: number): Promise<number> {
  return timed(async () => {
    const proc = Bun.spawn([NATIVE_WHISPER.parakeetCli, "-m", model, "-f", wav, "-t", String(threads), "-np"], { stdout: "ignore", stderr: "pipe" });
    const [stderr, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited]);
    if (code !== 0) throw new Error(`parakeet-cli failed: ${stderr.split("\n").slice(-3).join(" ")}`);
  });
}

export async function parakeetFigures(pcm: Float32Array, wav: string, options: ParakeetBenchOptions): Promise<void> {
  const { threads, decoding, log } = options;
  const hours = pcm.length / 16_000 / 3600;
  const rate = (ms: number) => `${(hours / (ms / 3_600_000)).toFixed(2)} h/h`;
  const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  const whole = (t: Transcriber) => timed(() => t.transcribe(pcm, { language: "en" }));
  const skipped = (t: Transcriber) =>
    timed(() =>
      transcribePcm({ transcriber: t, vad: new SileroVad(), diarizer: new SingleSpeakerDiarizer() }, pcm, {
        language: "en",
        signal: new AbortController().signal,
      }),
    );

  const parakeetPath = ensureShapedParakeetModel("f16");
  const parakeet = () => new ParakeetTranscriber({ model: "bench", path: parakeetPath, threads });
  const rows: { name: string; whole: number; skipped: number }[] = [];
  const cli = await timeParakeetCli(parakeetPath, wav, threads);
  log(`    parakeet-cli, whole file: ${s(cli)}`);
  const ours = await whole(parakeet());
  log(`    ours, whole file: ${s(ours)}: ratio ours/parakeet-cli ${(ours / cli).toFixed(2)}x (target <= 1.05x)`);
  const oursSkipped = await skipped(parakeet());
  log(`    ours, silence skipped: ${s(oursSkipped)}`);
  rows.push({ name: "parakeet-tdt-0.6b-v3 f16", whole: ours, skipped: oursSkipped });

  for (const shape of options.whisperShapes) {
    const path = ensureShapedWhisperModel(shape, "f16", options.tokensPerWindow);
    const whisper = () => new WhisperTranscriber({ model: "bench", path, gpu: "off", threads, decoding });
    // Each time printed as it is measured: large-v3-turbo's take many minutes each on a shared 2-core box.
    const name = `whisper ${shape} f16`;
    const wholeMs = await whole(whisper());
    log(`    ${name}: whole file ${s(wholeMs)}`);
    const skippedMs = await skipped(whisper());
    log(`    ${name}: silence skipped ${s(skippedMs)}`);
    rows.push({ name, whole: wholeMs, skipped: skippedMs });
  }
  log(`  hours of audio per wall hour (${threads} threads):`);
  for (const r of rows) log(`    ${r.name.padEnd(28)} whole ${rate(r.whole).padStart(10)}   silence skipped ${rate(r.skipped).padStart(10)}`);
  const best = (r: (typeof rows)[number]) => Math.min(r.whole, r.skipped);
  const p = rows[0]!;
  for (const r of rows.slice(1)) log(`    Parakeet vs ${r.name} (each at its faster mode): ${(best(r) / best(p)).toFixed(2)}x`);
  log(`    Parakeet silence skipped vs whole file: ${(p.whole / p.skipped).toFixed(2)}x faster`);
}
