// bench/diarize.ts: the classic diarizer on the broad generated corpus of issue 26
// (scripts/speaker-corpus.ts: espeak-ng, festival, both mixed, and pocketsphinx's human
// speech; 2-4 speakers and lone voices; cached under .test-data/speaker-corpus). Prints, for
// the tuning half and the held-out half (no parameter is chosen on it), overall, per
// synthesiser, per number of voices and by whether every voice speaks 10 s or more: DER (NIST
// collar 0.25 s), speaker count right, turn changes found within 1 s; lone voices kept as one
// speaker; the diarizer's time per hour of audio on one core.
// Targets on the held-out half: count right >= 90%, turn changes >= 90%, DER <= 15%, lone
// voices one speaker >= 95%. A large gap between the halves means the tuning overfit.
// Then the neural diarizer runs end to end on the generated ONNX stand-ins: random weights,
// so its output is not scored here; an operator with real models scores them with
// `parley eval speakers DIR`.
// Usage: bun bench/diarize.ts [--half tuning|held-out] [--files] [--sweep [stop|pitch|change|apart]] [--margins] [--no-neural] [--against REF] [--seed N[,N...]]
// (--seed N: a second corpus drawn the same way with another seed, made and cached beside the first;
// several: their recordings scored together, each half pooled over the draws)
// (--against REF: the classic diarizer as at git revision REF timed on the same recordings, each
// recording by both in turn, so a shared machine's load weighs on both alike: "x times faster")
// (--sweep: only the clustering's stopping λ, or with `pitch` the pitch test's threshold, with
// `change` the change detector's λ, or with `apart` how far a split's parts must lie, tried on the
// tuning half, one line each, the other settings as in use; --margins: why counts miss, decision
// 219: per recording, the stops that would count it right, and how far apart its true voices are
// by the same measure)
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { type CorpusEntry, corpusDir, ensureSpeakerCorpus, type Half, SEED } from "../scripts/speaker-corpus";
import { cachedTinyDiarizationModels } from "../scripts/test-models/onnx-diarization";
import { percent, type Scored, summarise, summaryLine } from "../src/cli/eval-speakers";
import { ClassicDiarizer, clusterPieces, mergeSteps, PENALTIES, resegmentPieces, speechPieces, turnsOf } from "../src/engines/classic-diarizer";
import { scoreDiarization } from "../src/engines/diarization-score";
import type { Diarizer } from "../src/engines/diarizer";
import { FfmpegAudioDecoder, findFfmpeg } from "../src/engines/ffmpeg-audio";
import { NeuralDiarizer } from "../src/engines/neural-diarizer";
import { parseRttm } from "../src/engines/rttm";
import { accumulate, combine, criticalPenalty, emptyStats, type GaussianStats } from "../src/engines/speaker-gaussian";
import { SileroVad, type SpeechRegion } from "../src/engines/vad";

const args = process.argv.slice(2);
const only = args.includes("--half") ? (args[args.indexOf("--half") + 1] as Half) : null;
// Another seed: a second corpus drawn the same way, beside the first (decision 223); or several,
// scored together (one draw's half of 26 conversations moves 4 % a conversation).
const seeds = (args.includes("--seed") ? args[args.indexOf("--seed") + 1]! : String(SEED)).split(",").map(Number);
const vad = new SileroVad();
const audio = new FfmpegAudioDecoder(findFfmpeg());

type Loaded = { entry: CorpusEntry; pcm: Float32Array; regions: SpeechRegion[]; truth: ReturnType<typeof parseRttm> };

/** The recording, its truth and its speech regions (the VAD's, cached beside it: they do not depend on the diarizer). */
async function load(corpus: string, entry: CorpusEntry): Promise<Loaded> {
  const pcm = await audio.decodePcm16k(join(corpus, `${entry.name}.wav`));
  const truth = parseRttm(readFileSync(join(corpus, `${entry.name}.rttm`), "utf8"));
  const cached = join(corpus, `${entry.name}.vad.json`);
  if (!existsSync(cached)) writeFileSync(cached, JSON.stringify((await vad.analyse(pcm)).regions));
  return { entry, pcm, truth, regions: JSON.parse(readFileSync(cached, "utf8")) };
}

/** A scored recording, with the least any one of its true voices speaks (`quietest`, seconds). */
type Row = Scored & { entry: CorpusEntry; quietest: number };

/** The least any one voice speaks in the truth, in seconds: a voice of a sentence or two is where the count misses most (decision 243). */
function quietestVoice(truth: Loaded["truth"]): number {
  const spoken = new Map<string, number>();
  for (const t of truth) spoken.set(t.speaker, (spoken.get(t.speaker) ?? 0) + t.end - t.start);
  return Math.min(...spoken.values());
}
/** Conversations whose quietest voice speaks less than this are scored apart from the rest. */
const QUIET_SECONDS = 10;

/** The diarizer on every recording, timed; `beside`, if given, timed on each recording right after it (its turns unused). */
async function run(diarizer: Diarizer, recordings: Loaded[], beside?: Diarizer): Promise<{ rows: Row[]; ms: number; besideMs: number }> {
  const rows: Row[] = [];
  let [ms, besideMs] = [0, 0];
  for (const r of recordings) {
    const t0 = performance.now();
    const turns = await diarizer.diarize(r.pcm, r.regions, {});
    const t1 = performance.now();
    await beside?.diarize(r.pcm, r.regions, {});
    [ms, besideMs] = [ms + t1 - t0, besideMs + performance.now() - t1];
    rows.push({
      name: r.entry.name,
      seconds: r.pcm.length / 16_000,
      score: scoreDiarization(r.truth, turns),
      entry: r.entry,
      quietest: quietestVoice(r.truth),
    });
  }
  return { rows, ms, besideMs };
}

/** The classic diarizer as at git revision `ref`: its src/ unpacked in a temporary folder beside a link to node_modules. */
async function classicAt(ref: string): Promise<{ diarizer: Diarizer; dispose: () => void }> {
  const root = join(import.meta.dir, "..");
  const archive = Bun.spawnSync(["git", "archive", ref, "src", "package.json", "tsconfig.json"], { cwd: root, stderr: "pipe" });
  if (!archive.success) throw new Error(`git archive ${ref}: ${archive.stderr.toString()}`);
  const dir = mkdtempSync(join(tmpdir(), "parley-diarizer-"));
  Bun.spawnSync(["tar", "-x", "-C", dir], { stdin: archive.stdout });
  symlinkSync(realpathSync(join(root, "node_modules")), join(dir, "node_modules"));
  const { ClassicDiarizer: Then } = await import(join(dir, "src/engines/classic-diarizer.ts"));
  return { diarizer: new Then(), dispose: () => rmSync(dir, { recursive: true, force: true }) };
}

const perHour = (ms: number, recordings: Loaded[]) =>
  `${((ms / 1000 / recordings.reduce((s, r) => s + r.pcm.length / 16_000, 0)) * 3600).toFixed(1)} s per hour of audio`;

function print(rows: Row[], half: Half) {
  const mine = rows.filter((r) => r.entry.half === half);
  const talks = mine.filter((r) => !r.entry.lone);
  const lone = mine.filter((r) => r.entry.lone);
  console.log(`  ${half} half, ${talks.length} conversations: ${summaryLine(talks)}`);
  for (const synth of [...new Set(talks.map((r) => r.entry.synthesiser))])
    console.log(`    ${synth.padEnd(20)} ${summaryLine(talks.filter((r) => r.entry.synthesiser === synth))}`);
  for (const n of [2, 3, 4]) console.log(`    ${`${n} speakers`.padEnd(20)} ${summaryLine(talks.filter((r) => r.entry.speakers === n))}`);
  console.log(`    ${`each voice >= ${QUIET_SECONDS} s`.padEnd(20)} ${summaryLine(talks.filter((r) => r.quietest >= QUIET_SECONDS))}`);
  console.log(`    ${`a voice < ${QUIET_SECONDS} s`.padEnd(20)} ${summaryLine(talks.filter((r) => r.quietest < QUIET_SECONDS))}`);
  const alone = lone.filter((r) => r.score.foundSpeakers === 1).length;
  console.log(`    lone voices kept as one speaker: ${alone}/${lone.length} (${percent(alone / Math.max(1, lone.length))})`);
  return { talks: summarise(talks), lone: alone / Math.max(1, lone.length) };
}

/** The values each sweepable setting is tried at. */
const SWEEPS = {
  stop: [5.5, 6, 6.5, 7, 8, 9, 10, 11, 12],
  pitch: [3, 4, 4.5, 4.7, 5, 5.25, 5.5, 5.85, 6, 8, Number.POSITIVE_INFINITY],
  change: [1, 1.25, 1.5, 1.75, 2, 3],
  apart: [0, 1.35, 1.5, 1.8, 2, 2.2, 2.4, 2.6, 3.2],
};
type Sweepable = keyof typeof SWEEPS;

/**
 * The tuning half under other values of one setting, one line each, the rest as in use: how
 * the one in use was chosen (never on the held-out half). `stop`: the clustering's stopping λ,
 * the merge order kept; `pitch`: the pitch test's threshold (decisions 223, 238); `change`: the
 * change detector's λ (decision 237); `apart`: how far a split's parts must lie (decision 238).
 * Decisions 177, 178, 195 and 223 list the other settings tried.
 */
async function sweep(tuning: Loaded[], setting: Sweepable) {
  console.log(`sweep of ${setting} on the tuning half (${tuning.length} recordings): count right, turn changes, DER; lone voices kept whole`);
  // The pieces depend only on the change detector: unless it is the setting swept, cut once.
  const cutAt = (change: number) => tuning.map((r) => speechPieces(r.pcm, r.regions, change));
  const once = setting === "change" ? null : cutAt(PENALTIES.change);
  for (const value of SWEEPS[setting]) {
    const penalties = { ...PENALTIES, [setting]: value };
    const cut = once ?? cutAt(value);
    const rows = tuning.map((r, i) => {
      const { stretches, pieces } = cut[i]!;
      const clusters = pieces.length ? clusterPieces(pieces, {}, penalties) : [];
      const redrawn = resegmentPieces(stretches, pieces, clusters, penalties);
      const turns = pieces.length ? turnsOf(redrawn.spans, redrawn.clusters) : [];
      return { name: r.entry.name, seconds: r.pcm.length / 16_000, score: scoreDiarization(r.truth, turns), entry: r.entry };
    });
    const talks = summarise(rows.filter((r) => !r.entry.lone));
    const lone = rows.filter((r) => r.entry.lone);
    const whole = lone.filter((r) => r.score.foundSpeakers === 1).length;
    const line = `count ${percent(talks.countRight / talks.files)}, changes ${percent(talks.changesFound / talks.changes)}, DER ${percent(talks.der)}; lone ${whole}/${lone.length}`;
    console.log(`  ${setting} ${String(value).padEnd(8)} ${line}${value === PENALTIES[setting] ? "   <- in use" : ""}`);
  }
}

/**
 * Why a count misses (decision 219), on the clustering before relabelling. Each merge's
 * critical λ (the stop under which it would not happen) gives the stops that count a recording
 * right: above every merge down to its true count, below the next. The truth's closest pair
 * is the smallest critical λ between two of its true voices, each piece given to the voice it
 * overlaps most: below the stops that keep lone voices whole, no stopping rule can count it
 * right with these features and pieces, whatever the merge order.
 */
function margins(recordings: Loaded[]) {
  console.log(`margins (${recordings.length} recordings): stops that count each right, [from, to); the truth's closest pair of voices`);
  const spans: [number, number][] = [];
  for (const r of recordings) {
    const { pieces } = speechPieces(r.pcm, r.regions, PENALTIES.change);
    const critical = new Map<number, number>();
    for (const step of mergeSteps(
      pieces,
      PENALTIES.merge,
      pieces.map((_, i) => i),
    ))
      critical.set(step.clusters, criticalPenalty(step.a, step.b));
    const k = r.entry.speakers;
    const from = Math.max(0, ...[...critical].filter(([clusters]) => clusters > k).map(([, c]) => c));
    const to = pieces.length < k ? 0 : (critical.get(k) ?? Number.POSITIVE_INFINITY);
    spans.push([from, to]);
    const voices = new Map<string | number, GaussianStats>();
    for (const p of pieces) {
      const overlap = (t: { start: number; end: number }) => Math.min(t.end, p.end) - Math.max(t.start, p.start);
      const voice = r.truth.reduce((best, t) => (overlap(t) > overlap(best) ? t : best)).speaker;
      accumulate(voices.get(voice) ?? voices.set(voice, emptyStats(p.stats.d)).get(voice)!, p.stats);
    }
    const stats = [...voices.values()];
    const closest = Math.min(...stats.flatMap((a, i) => stats.slice(i + 1).map((b) => criticalPenalty(combine(a, emptyStats(a.d)), b))));
    const truth = k === 1 ? "" : `  truth's closest pair ${closest.toFixed(1)}${voices.size < k ? ` (${k - voices.size} voice(s) own no piece)` : ""}`;
    console.log(
      `    ${r.entry.name.padEnd(28)} ${r.entry.half.padEnd(9)} ${k} speaker(s): right for stops [${from.toFixed(1)}, ${Number.isFinite(to) ? to.toFixed(1) : "∞"})${truth}`,
    );
  }
  const edges = [...new Set(spans.flat())].filter(Number.isFinite).sort((a, b) => a - b);
  const right = (stop: number) => spans.filter(([from, to]) => from <= stop && stop < to).length;
  const best = Math.max(...edges.map(right));
  const at = edges.filter((e) => right(e) === best).map((e) => `${e.toFixed(2)}-${edges.find((x) => x > e)?.toFixed(2) ?? "∞"}`);
  console.log(`  most counted right: ${best}/${spans.length}, for stops ${at.join(", ")} (in use: ${PENALTIES.stop})`);
}

/** The setting `--sweep` names, checked before the corpus loads; a bare --sweep (or one followed by another flag) sweeps the stop. */
function sweptSetting(): Sweepable | null {
  if (!args.includes("--sweep")) return null;
  const named = args[args.indexOf("--sweep") + 1] ?? "--";
  const setting = named.startsWith("--") ? "stop" : named;
  if (!Object.hasOwn(SWEEPS, setting)) throw new Error(`--sweep ${named}: no such setting; one of ${Object.keys(SWEEPS).join(", ")}`);
  return setting as Sweepable;
}

async function main() {
  const swept = sweptSetting();
  const recordings: Loaded[] = [];
  for (const seed of seeds) {
    const corpus = corpusDir(seed);
    const manifest = ensureSpeakerCorpus(seed, console.log);
    const entries = manifest.entries.filter((e) => !only || e.half === only);
    const minutes = entries.reduce((s, e) => s + e.seconds, 0) / 60;
    console.log(
      `corpus (seed ${seed}): ${entries.length} recordings, ${minutes.toFixed(1)} min; synthesisers missing here: ${manifest.missing.join(", ") || "none"}`,
    );
    // Names repeat across draws: each carries its seed.
    for (const e of entries) {
      const loaded = await load(corpus, e);
      recordings.push(seeds.length > 1 ? { ...loaded, entry: { ...e, name: `${seed}/${e.name}` } } : loaded);
    }
  }

  if (swept)
    return sweep(
      recordings.filter((r) => r.entry.half === "tuning"),
      swept,
    );
  if (args.includes("--margins")) return margins(recordings);
  const diarizer = new ClassicDiarizer();
  const ref = args.includes("--against") ? args[args.indexOf("--against") + 1]! : null;
  const then = ref ? await classicAt(ref) : null;
  const { rows, ms, besideMs } = await run(diarizer, recordings, then?.diarizer);
  then?.dispose();
  console.log(`classic diarizer (${diarizer.model}): ${perHour(ms, recordings)}, one core (load average ${loadavg()[0]!.toFixed(1)})`);
  if (ref) console.log(`  as at ${ref}, on each recording right after: ${perHour(besideMs, recordings)}; now ${(besideMs / ms).toFixed(1)} times faster`);
  if (args.includes("--files")) {
    for (const r of rows)
      console.log(
        `    ${r.name.padEnd(28)} ${r.entry.half.padEnd(9)} DER ${percent(r.score.der).padStart(6)}  speakers ${r.score.foundSpeakers}/${r.score.trueSpeakers}  changes ${r.score.changesFound}/${r.score.changes}`,
      );
  }
  const halves: Half[] = only ? [only] : ["tuning", "held-out"];
  for (const half of halves) {
    const { talks, lone } = print(rows, half);
    if (half !== "held-out") continue;
    const met = [
      ["count right >= 90%", talks.countRight / Math.max(1, talks.files) >= 0.9],
      ["turn changes >= 90%", talks.changesFound / Math.max(1, talks.changes) >= 0.9],
      ["DER <= 15%", talks.der <= 0.15],
      ["lone voices >= 95%", lone >= 0.95],
    ] as const;
    console.log(`  held-out targets: ${met.map(([what, ok]) => `${what} ${ok ? "met" : "NOT met"}`).join(", ")}`);
  }

  if (args.includes("--no-neural")) return;
  // Same shapes as the real pyannote and WeSpeaker exports, random weights: this proves the
  // path runs end to end on every recording, and times it; the speakers it finds mean nothing.
  const models = cachedTinyDiarizationModels();
  const neural = new NeuralDiarizer({
    segmentation: join(models, "pyannote-segmentation-3.0/model.onnx"),
    embedding: join(models, "wespeaker-resnet34/voxceleb_resnet34_LM.onnx"),
    names: { segmentation: "pyannote-segmentation-3.0", embedding: "wespeaker-resnet34" },
  });
  const neuralRun = await run(neural, recordings);
  const ok = neuralRun.rows.filter((r) => r.score.foundSpeakers > 0).length;
  console.log(
    `neural diarizer (${neural.model}) on the generated ONNX stand-ins: ran on ${ok}/${recordings.length} recordings, ${perHour(neuralRun.ms, recordings)}; NOT scored (random weights). With real models installed: parley eval speakers ${corpusDir(seeds[0]!)}`,
  );
}

await main();
