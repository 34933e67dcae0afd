// bench/diarize.ts: the classic diarizer (decision 097) on espeak-ng conversations made here
// (two voices, three voices, one voice): speakers found, diarization error rate (NIST
// collar 0.25 s) and the farthest true turn change from a found one; then its time against
// the transcriber's on the same audio (target: classic <= 5%); then the clustering
// penalty λ swept around the learnt value, to show the range that works.
// The transcriber is WhisperTranscriber on the generated tiny ggml model (no real weights
// are reachable here), greedy; a real model is slower, so the real fraction is smaller.
// Usage: bun bench/diarize.ts [repetitions, default 3]
import { availableParallelism } from "node:os";
import { boundaryErrors, diarizationErrorRate } from "../scripts/test-audio/diarization-score";
import { type Conversation, conversation, script } from "../scripts/test-audio/espeak-conversation";
import { ensureTestModels } from "../scripts/test-models/cache";
import { ClassicDiarizer, PENALTIES } from "../src/engines/classic-diarizer";
import { SingleSpeakerDiarizer } from "../src/engines/diarizer";
import { SileroVad } from "../src/engines/vad";
import { DEFAULT_DECODING } from "../src/engines/whisper-runner";
import { WhisperTranscriber } from "../src/engines/whisper-transcriber";
import { transcribePcm } from "../src/modules/transcriptions/pipeline";

const repetitions = Number(process.argv[2] ?? 3);
const vad = new SileroVad();
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const CONVERSATIONS: [string, number[]][] = [
  ["two voices, 12 turns", [0, 1, 0, 1, 1, 0, 1, 0, 0, 1, 0, 1]],
  ["three voices, 12 turns", [0, 1, 2, 0, 2, 1, 1, 0, 2, 2, 1, 0]],
  ["one voice, 6 turns", [1, 1, 1, 1, 1, 1]],
];

async function quality(name: string, c: Conversation, diarizer = new ClassicDiarizer()) {
  const { regions } = await vad.analyse(c.pcm);
  const turns = await diarizer.diarize(c.pcm, regions, {});
  const found = new Set(turns.map((t) => t.speaker)).size;
  const truth = new Set(c.turns.map((t) => t.speaker)).size;
  const errors = boundaryErrors(c.turns, turns);
  return { name, found, truth, der: diarizationErrorRate(c.turns, turns), worst: errors.length ? Math.max(...errors) : 0, regions };
}

async function main() {
  const talks = CONVERSATIONS.map(([name, order]) => [name, conversation(script(order))] as const);
  console.log(`classic diarizer (λ change ${PENALTIES.change}, cluster ${PENALTIES.cluster}) on espeak-ng conversations`);
  for (const [name, c] of talks) {
    const q = await quality(name, c);
    const worst = Number.isFinite(q.worst) ? `${q.worst.toFixed(2)} s` : "a change not found";
    console.log(
      `  ${name} (${(c.pcm.length / 16_000).toFixed(1)} s): ${q.found} speakers found of ${q.truth}, DER ${(q.der * 100).toFixed(1)}%, farthest turn change ${worst}`,
    );
  }

  const [name, c] = talks[0]!;
  const { regions } = await vad.analyse(c.pcm);
  const diarizer = new ClassicDiarizer();
  const diarizing: number[] = [];
  const transcribing: number[] = [];
  const models = ensureTestModels();
  const threads = Math.min(8, availableParallelism());
  const transcriber = new WhisperTranscriber({
    model: "tiny",
    path: models.whisper,
    gpu: "off",
    threads,
    decoding: { ...DEFAULT_DECODING, temperatureInc: 0 },
  });
  await transcriber.load();
  const engines = { transcriber, vad, diarizer: new SingleSpeakerDiarizer() };
  for (let i = 0; i < repetitions; i++) {
    // Interleaved, so machine noise hits both alike.
    const t0 = performance.now();
    await diarizer.diarize(c.pcm, regions, {});
    diarizing.push(performance.now() - t0);
    const t1 = performance.now();
    await transcribePcm(engines, c.pcm, { language: "en", signal: new AbortController().signal });
    transcribing.push(performance.now() - t1);
  }
  const [d, t] = [median(diarizing), median(transcribing)];
  console.log(`time on "${name}" (${(c.pcm.length / 16_000).toFixed(1)} s of audio), ${repetitions} runs, medians, ${threads} threads:`);
  console.log(`  classic diarizer: ${d.toFixed(0)} ms (${((d / (c.pcm.length / 16_000)) * 60).toFixed(0)} ms per audio minute)`);
  console.log(`  transcription (VAD + generated tiny whisper, greedy, ${await transcriber.backend()} build): ${t.toFixed(0)} ms`);
  console.log(`  diarizer / transcriber: ${((d / t) * 100).toFixed(1)}%   (target <= 5%)`);

  console.log("clustering penalty λ swept (speakers found / true, DER):");
  for (const cluster of [2, 2.5, 3, 4, 5, 6, 8]) {
    const row = [];
    for (const [n, talk] of talks) {
      const q = await quality(n, talk, new ClassicDiarizer({ change: PENALTIES.change, cluster }));
      row.push(`${q.found}/${q.truth} ${(q.der * 100).toFixed(0)}%`);
    }
    console.log(`  λ ${String(cluster).padEnd(4)} ${row.join("   ")}${cluster === PENALTIES.cluster ? "   <- in use" : ""}`);
  }
}

await main();
