import { type Diarizer, numberSpeakers, type SpeakerCountHint, type SpeakerTurn } from "./diarizer";
import { ClassicVoiceprinter } from "./classic-voiceprint";
import { findSpeakerChanges } from "./speaker-changes";
import { resegment } from "./speaker-resegment";
import { splitByPitch } from "./speaker-pitch-split";
import { splitClusters } from "./speaker-split";
import { CEPSTRA, cepstralFrames, FEATURE_RATE, logPitch } from "./speaker-features";
import { accumulate, addFrames, centred, combine, emptyStats, type GaussianStats, tiedDeltaBic } from "./speaker-gaussian";
import type { SpeechRegion } from "./vad";

/**
 * change: the change detector's BIC penalty (λ); it over-segments on purpose, since clustering
 * joins the pieces again (decision 097), but not at 1: pieces of a second or so are too short to
 * tell alike voices apart, and the first merges then mix them (decision 237: 1.25-1.75 all beat
 * 1 on the tuning half's DER and turn changes; the middle). merge: λ of the
 * tied-covariance ΔBIC that picks the next pair of clusters to merge (the one that loses
 * least); stop: the λ under which that pair's ΔBIC must still say "two" for the clustering to
 * stop. switch: what a change of speaker costs the frame-by-frame relabelling, in
 * log-likelihood. All chosen on the corpus' tuning half only (`bun bench/diarize.ts --sweep`):
 * merge and switch in decision 178 (a switch cost of 20 left flickers of a few frames, 150
 * missed short turns); stop in decision 195, the middle of the stops that count the tuning
 * half best (6.5 to 10). One λ did both before, and raising it joined voices: a larger λ also
 * merges large clusters first. split: how much more a cluster's whole turns must differ from
 * each other than each turn's halves do for the cluster to be parted in two (decision 221: the
 * tuning half counts best from 1.15 to 1.56; the middle). pitch: how many times the recording's
 * usual wander of a turn's pitch level two groups of a cluster's turns must lie apart for it to
 * be parted (decision 223 chose 5.25; decision 238 lowered it to 4 once apart guards it: on
 * the tuning halves of eleven draws 3.5 to 4.5 count best, 5 to 7 more than 5.25). apart: the
 * critical λ under which a split test's two parts are one voice after all and the split is
 * undone (decision 238: the tuning halves count best from 1.8 to 2.4; the middle).
 */
export const PENALTIES = { change: 1.5, merge: 6.5, stop: 8, switch: 100, split: 1.35, pitch: 4, apart: 2 };
/** Rounds of re-estimating the clusters' Gaussians and relabelling the frames (two; not tuned). */
const REFINE_ROUNDS = 2;
export type Penalties = typeof PENALTIES;
/**
 * Each feature's standard deviation over the recording after equalising: every feature then
 * weighs alike against the covariance floor (0.5), whatever the voices, the microphone and
 * the level; 4 was best on the tuning half (2.5 and 6 worse, decision 177).
 */
const SPREAD = 4;
/** Frames this far (in natural log of energy, ~35 dB) below the loud frames are pauses, not voice. */
const QUIET = 8;
/** A piece between changes longer than this many voiced frames (3 s) is cut, so a missed change can still be undone by clustering. */
const MAX_PIECE = 300;
/** Same-speaker turns less than this far apart (seconds) are one turn. */
const JOIN_GAP = 2;

/** A stretch of voiced frames between changes, and the speech time it stands for. */
export type SpeechPiece = { start: number; end: number; stats: GaussianStats; stretch: number; from: number; to: number };

/** The frames of one region that count, packed as rows of `d` features, with the time each starts. */
type VoicedFrames = { region: SpeechRegion; frames: Float32Array; d: number; times: Float64Array; count: number };

/**
 * Each region's frames within QUIET of the loud frames; `withPitch`, only those with a clear
 * pitch, its log a 13th feature beside the cepstra (voices differ most in pitch).
 */
function voicedFrames(pcm16k: Float32Array, regions: SpeechRegion[], withPitch: boolean): VoicedFrames[] {
  const cepstral = regions.map((region) => ({ region, frames: cepstralFrames(pcm16k, region.start, region.end) }));
  const energies = new Float32Array(cepstral.reduce((n, { frames }) => n + frames.count, 0));
  let at = 0;
  for (const { frames } of cepstral) {
    energies.set(frames.logEnergy, at);
    at += frames.count;
  }
  energies.sort(); // numerically, as a typed array
  const loud = energies[Math.floor(energies.length * 0.9)] ?? 0;
  const d = CEPSTRA + (withPitch ? 1 : 0);
  // Pitch only where the frame is loud enough to be kept: the search is its cost.
  const all = cepstral.map(({ region, frames }) => ({
    region,
    frames,
    pitch: withPitch
      ? logPitch(
          pcm16k,
          region.start,
          region.end,
          Uint8Array.from(frames.logEnergy, (e) => (e >= loud - QUIET ? 1 : 0)),
        )
      : null,
  }));
  return all.map(({ region, frames, pitch }) => {
    const out = new Float32Array(frames.count * d);
    const times = new Float64Array(frames.count);
    let count = 0;
    for (let f = 0; f < frames.count; f++) {
      if (frames.logEnergy[f]! < loud - QUIET) continue;
      if (pitch && Number.isNaN(pitch[f])) continue;
      out.set(frames.cepstra.subarray(f * CEPSTRA, (f + 1) * CEPSTRA), count * d);
      if (pitch) out[count * d + CEPSTRA] = pitch[f]!;
      times[count++] = region.start + f / FEATURE_RATE;
    }
    return { region, frames: out, d, times, count };
  });
}

/** The statistics of every loud enough cepstral frame of the spans, for voiceprints (decision 098: 12 cepstra, no pitch). */
export function voicedStats(pcm16k: Float32Array, spans: SpeechRegion[]): GaussianStats {
  const total = emptyStats(CEPSTRA);
  for (const v of voicedFrames(pcm16k, spans, false)) accumulate(total, addFrames(emptyStats(CEPSTRA), v.frames, 0, v.count));
  return total;
}

/**
 * Every feature scaled to the same spread over the recording (in place), so each weighs
 * alike against the covariance floor, whichever the voices and the microphone.
 */
function equalise(all: VoicedFrames[], spread: number): void {
  const d = all[0]?.d ?? 0;
  const stats = emptyStats(d);
  for (const v of all) addFrames(stats, v.frames, 0, v.count);
  if (stats.n < 2) return;
  let p = 0;
  const scale = new Float64Array(d);
  for (let i = 0; i < d; i++) {
    const variance = stats.outer[p]! / stats.n - (stats.sum[i]! / stats.n) ** 2;
    scale[i] = spread / Math.sqrt(Math.max(variance, 1e-9));
    p += d - i;
  }
  for (const v of all) for (let f = 0; f < v.count * d; f++) v.frames[f]! *= scale[f % d]!;
}

/** The voiced, equalised frames of each region, and each region cut at its speaker changes (and into pieces of at most MAX_PIECE frames). */
export function speechPieces(
  pcm16k: Float32Array,
  regions: SpeechRegion[],
  penalty: number,
  signal?: AbortSignal,
): { stretches: VoicedFrames[]; pieces: SpeechPiece[] } {
  const pieces: SpeechPiece[] = [];
  const all = voicedFrames(pcm16k, regions, true);
  equalise(all, SPREAD);
  all.forEach((v, stretch) => {
    signal?.throwIfAborted();
    if (v.count === 0) return;
    const cuts = [0, ...findSpeakerChanges(v.frames, v.d, v.count, penalty, signal), v.count];
    for (let i = 0; i + 1 < cuts.length; i++) {
      const [from, to] = [cuts[i]!, cuts[i + 1]!];
      const parts = Math.ceil((to - from) / MAX_PIECE);
      for (let p = 0; p < parts; p++) {
        const a = from + Math.round(((to - from) * p) / parts);
        const b = from + Math.round(((to - from) * (p + 1)) / parts);
        pieces.push({ ...span(v, a, b), stats: addFrames(emptyStats(v.d), v.frames, a, b), stretch, from: a, to: b });
      }
    }
  });
  return { stretches: all, pieces };
}

/** The time frames `a` to `b` of a stretch stand for: from its region's start or its first frame, to its region's end or the next frame. */
const span = (v: VoicedFrames, a: number, b: number) => ({ start: a === 0 ? v.region.start : v.times[a]!, end: b === v.count ? v.region.end : v.times[b]! });

/**
 * The clusters' turns redrawn frame by frame (speaker-resegment.ts), then each cluster whose
 * whole turns hold two voices parted and the frames redrawn again: by the turns' sounds
 * (speaker-split.ts, decision 221), then by their pitch levels (speaker-pitch-split.ts, decision
 * 223), unless the two parts lie too close to be two voices (speaker-split-apart.ts, decision
 * 238). Runs of one label within a stretch become the pieces, in time order, with their clusters.
 */
export function resegmentPieces(
  stretches: VoicedFrames[],
  pieces: SpeechPiece[],
  clusters: number[],
  penalties: Pick<Penalties, "switch" | "split" | "pitch" | "apart">,
  hint: SpeakerCountHint = {},
): { spans: { start: number; end: number }[]; clusters: number[] } {
  const labelled = stretches.map((v) => ({ frames: v.frames, d: v.d, count: v.count, labels: new Int32Array(v.count).fill(-1) }));
  pieces.forEach((p, i) => labelled[p.stretch]!.labels.fill(clusters[i]!, p.from, p.to));
  resegment(labelled, penalties.switch, REFINE_ROUNDS);
  // Where the hint's minimum forced the count, the clusters are a voice cut up on purpose, not
  // voices the stop joined: no split test then.
  const forced = hint.minSpeakers != null && new Set(clusters).size <= hint.minSpeakers;
  const most = hint.maxSpeakers ?? undefined;
  if (!forced && splitClusters(labelled, penalties.split, most, penalties.apart).some((c) => c.split)) resegment(labelled, penalties.switch, REFINE_ROUNDS);
  // Log pitch is the feature after the cepstra (voicedFrames).
  if (!forced && splitByPitch(labelled, CEPSTRA, penalties.pitch, most, penalties.apart).some((c) => c.split))
    resegment(labelled, penalties.switch, REFINE_ROUNDS);
  const spans: { start: number; end: number }[] = [];
  const out: number[] = [];
  labelled.forEach((l, s) => {
    for (let a = 0; a < l.count; ) {
      let b = a + 1;
      while (b < l.count && l.labels[b] === l.labels[a]) b++;
      spans.push(span(stretches[s]!, a, b));
      out.push(l.labels[a]!);
      a = b;
    }
  });
  return { spans, clusters: out };
}

/** One step of the agglomeration: the two clusters it would merge next, by their statistics, and how many clusters there are before it. */
export type MergeStep = { a: GaussianStats; b: GaussianStats; clusters: number };

/**
 * The agglomeration of decisions 178 and 195, one step at a time: the pair of clusters whose
 * merge loses least under λ = `merge` (the tied-covariance ΔBIC) is offered; the caller
 * stops (returns from the loop) or asks for the next, and the pair is merged. Yields until one
 * cluster is left; `clusterOf` (each piece's cluster) is kept up to date as it goes.
 */
export function* mergeSteps(pieces: SpeechPiece[], merge: number, clusterOf: number[], signal?: AbortSignal): Generator<MergeStep> {
  const n = pieces.length;
  const d = pieces[0]?.stats.d ?? 0;
  const stats = pieces.map((p) => combine(p.stats, emptyStats(d)));
  const alive = new Set(stats.keys());
  const score = new Float64Array(n * n);
  // Each cluster's scatter about its mean, kept: every pair's ΔBIC needs both.
  const scatter = stats.map(centred);
  const pair = (i: number, j: number) => tiedDeltaBic(stats[i]!, stats[j]!, merge, scatter[i], scatter[j]);
  for (let i = 0; i < n; i++) for (let j = i + 1; j < n; j++) score[i * n + j] = pair(i, j);
  // Each row's least score to a living later cluster, and the first such cluster: the least pair
  // is then found in O(n) a merge, not O(n²); a row is scanned again only when its least pair
  // involved the merged clusters. Ties go to the first pair in (i, j) order, as a full scan would.
  const rowBest = new Float64Array(n);
  const rowArg = new Int32Array(n);
  const scanRow = (i: number) => {
    let [best, arg] = [Number.POSITIVE_INFINITY, -1];
    for (const j of alive) if (j > i && score[i * n + j]! < best) [best, arg] = [score[i * n + j]!, j];
    [rowBest[i], rowArg[i]] = [best, arg];
  };
  for (let i = 0; i < n; i++) scanRow(i);
  while (alive.size > 1) {
    signal?.throwIfAborted();
    let bi = -1;
    for (const i of alive) if (rowBest[i]! < (bi < 0 ? Number.POSITIVE_INFINITY : rowBest[bi]!)) bi = i;
    const bj = rowArg[bi]!;
    // Copies: the caller may keep a step after the pair is merged.
    yield { a: combine(stats[bi]!, emptyStats(d)), b: combine(stats[bj]!, emptyStats(d)), clusters: alive.size };
    accumulate(stats[bi]!, stats[bj]!);
    scatter[bi] = centred(stats[bi]!);
    alive.delete(bj);
    for (let k = 0; k < n; k++) if (clusterOf[k] === bj) clusterOf[k] = bi;
    for (const k of alive) if (k !== bi) score[Math.min(k, bi) * n + Math.max(k, bi)] = pair(Math.min(k, bi), Math.max(k, bi));
    scanRow(bi);
    for (const k of alive) {
      if (k === bi) continue;
      if (rowArg[k] === bj || (k < bi && rowArg[k] === bi)) scanRow(k);
      else if (k < bi && (score[k * n + bi]! < rowBest[k]! || (score[k * n + bi] === rowBest[k] && bi < rowArg[k]!)))
        [rowBest[k], rowArg[k]] = [score[k * n + bi]!, bi];
    }
  }
}

/**
 * Agglomerative clustering by the tied-covariance ΔBIC (decisions 178, 195): the pair of
 * clusters whose merge loses least under λ = `merge` is merged until that pair would lose
 * under λ = `stop` too, more clusters than `maxSpeakers` are merged regardless, and no merge
 * goes below `minSpeakers`. Returns each piece's cluster. Two λs, because λ also orders the
 * merges (a larger one merges large clusters first): moving the stop alone keeps the order.
 */
export function clusterPieces(pieces: SpeechPiece[], hint: SpeakerCountHint, penalties: Pick<Penalties, "merge" | "stop">, signal?: AbortSignal): number[] {
  const clusterOf = pieces.map((_, i) => i);
  const min = Math.max(1, hint.minSpeakers ?? 1);
  const max = Math.max(min, hint.maxSpeakers ?? Number.POSITIVE_INFINITY);
  for (const { a, b, clusters } of mergeSteps(pieces, penalties.merge, clusterOf, signal)) {
    if (clusters <= min) break;
    if (clusters <= max && tiedDeltaBic(a, b, penalties.stop) > 0) break;
  }
  return clusterOf;
}

/** Consecutive pieces of one cluster, less than JOIN_GAP apart, as one turn. */
export function turnsOf(pieces: { start: number; end: number }[], clusters: number[]): SpeakerTurn[] {
  const turns: { speaker: number; start: number; end: number }[] = [];
  pieces.forEach((p, i) => {
    const last = turns.at(-1);
    if (last && last.speaker === clusters[i] && p.start - last.end < JOIN_GAP) last.end = p.end;
    else turns.push({ speaker: clusters[i]!, start: p.start, end: p.end });
  });
  return numberSpeakers(turns);
}

/**
 * The classic, weight-free diarizer (decisions 097, 177, 178, 195, 223): cepstral and pitch features of
 * the voiced frames in the VAD's speech regions, speaker changes by ΔBIC, agglomerative
 * clustering with a tied-covariance BIC as the stopping rule, then every frame relabelled by
 * Viterbi over the clusters' Gaussians, and clusters whose whole turns hold two voices, by their
 * sounds or their pitch levels, parted where the parts lie apart (decisions 221, 223, 238). No
 * model file; about 0.1 to 0.2 s per minute of audio on one core (decisions 220, 221, 223).
 */
export class ClassicDiarizer implements Diarizer {
  readonly kind = "classic";
  readonly model = "classic-bic-mfcc";
  readonly voiceprints = new ClassicVoiceprinter(voicedStats);

  /** Other penalties than the learnt ones only for the bench that learns them. */
  constructor(private readonly penalties: Penalties = PENALTIES) {}

  async diarize(pcm16k: Float32Array, regions: SpeechRegion[], hint: SpeakerCountHint, signal?: AbortSignal): Promise<SpeakerTurn[]> {
    const { stretches, pieces } = speechPieces(
      pcm16k,
      [...regions].sort((a, b) => a.start - b.start),
      this.penalties.change,
      signal,
    );
    if (pieces.length === 0) return [];
    const clusters = clusterPieces(pieces, hint, this.penalties, signal);
    const redrawn = resegmentPieces(stretches, pieces, clusters, this.penalties, hint);
    // Relabelling can empty a cluster; below the hint's minimum the clustering's turns stand.
    if (new Set(redrawn.clusters).size < (hint.minSpeakers ?? 1)) return turnsOf(pieces, clusters);
    return turnsOf(redrawn.spans, redrawn.clusters);
  }
}
