import { type Diarizer, numberSpeakers, type SpeakerCountHint, type SpeakerTurn } from "./diarizer";
import { ClassicVoiceprinter } from "./classic-voiceprint";
import { findSpeakerChanges } from "./speaker-changes";
import { CEPSTRA, cepstralFrames, FEATURE_RATE, logPitch } from "./speaker-features";
import { accumulate, addFrames, combine, deltaBic, emptyStats, type GaussianStats, logDeterminant } from "./speaker-gaussian";
import type { SpeechRegion } from "./vad";

/**
 * The BIC penalties (λ): change detection at λ = 1 over-segments (a false change costs
 * nothing once clustering joins the pieces again, decision 097); clustering at λ = 3 was
 * chosen on the tuning half of the generated corpus only (`bun bench/diarize.ts --sweep`,
 * decision 177).
 */
export const PENALTIES = { change: 1, cluster: 3 };
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
export type SpeechPiece = { start: number; end: number; stats: GaussianStats };

/** The frames of one region that count, packed as rows of `d` features, with the time each starts. */
type VoicedFrames = { region: SpeechRegion; frames: Float32Array; d: number; times: Float64Array; count: number };

/**
 * Each region's frames within QUIET of the loud frames; `withPitch`, only those with a clear
 * pitch, its log a 13th feature beside the cepstra (voices differ most in pitch).
 */
function voicedFrames(pcm16k: Float32Array, regions: SpeechRegion[], withPitch: boolean): VoicedFrames[] {
  const all = regions.map((region) => ({
    region,
    frames: cepstralFrames(pcm16k, region.start, region.end),
    pitch: withPitch ? logPitch(pcm16k, region.start, region.end) : null,
  }));
  const energies = all.flatMap(({ frames }) => [...frames.logEnergy]).sort((a, b) => a - b);
  const loud = energies[Math.floor(energies.length * 0.9)] ?? 0;
  const d = CEPSTRA + (withPitch ? 1 : 0);
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

/** Each region cut at its speaker changes (and into pieces of at most MAX_PIECE frames). */
export function speechPieces(pcm16k: Float32Array, regions: SpeechRegion[], penalty: number, signal?: AbortSignal): SpeechPiece[] {
  const pieces: SpeechPiece[] = [];
  const all = voicedFrames(pcm16k, regions, true);
  equalise(all, SPREAD);
  for (const v of all) {
    signal?.throwIfAborted();
    if (v.count === 0) continue;
    const cuts = [0, ...findSpeakerChanges(v.frames, v.d, v.count, penalty, signal), v.count];
    for (let i = 0; i + 1 < cuts.length; i++) {
      const [from, to] = [cuts[i]!, cuts[i + 1]!];
      const parts = Math.ceil((to - from) / MAX_PIECE);
      for (let p = 0; p < parts; p++) {
        const a = from + Math.round(((to - from) * p) / parts);
        const b = from + Math.round(((to - from) * (p + 1)) / parts);
        const start = a === 0 ? v.region.start : v.times[a]!;
        const end = b === v.count ? v.region.end : v.times[b]!;
        pieces.push({ start, end, stats: addFrames(emptyStats(v.d), v.frames, a, b) });
      }
    }
  }
  return pieces;
}

/**
 * Agglomerative clustering by ΔBIC: the pair of clusters whose merge loses least is merged
 * until every merge would lose (ΔBIC > 0), more clusters than `maxSpeakers` are merged
 * regardless, and no merge goes below `minSpeakers`. Returns each piece's cluster.
 */
export function clusterPieces(pieces: SpeechPiece[], hint: SpeakerCountHint, penalty: number, signal?: AbortSignal): number[] {
  const n = pieces.length;
  const clusterOf = pieces.map((_, i) => i);
  const stats = pieces.map((p) => combine(p.stats, emptyStats(p.stats.d)));
  const logDet = stats.map(logDeterminant);
  const alive = new Set(clusterOf);
  const score = new Float64Array(n * n);
  const pair = (i: number, j: number) => deltaBic(stats[i]!, stats[j]!, penalty, logDet[i], logDet[j]);
  for (let i = 0; i < n; i++) for (let j = i + 1; j < n; j++) score[i * n + j] = pair(i, j);
  const min = Math.max(1, hint.minSpeakers ?? 1);
  const max = Math.max(min, hint.maxSpeakers ?? Number.POSITIVE_INFINITY);
  while (alive.size > min) {
    signal?.throwIfAborted();
    let best = Number.POSITIVE_INFINITY;
    let bi = -1;
    let bj = -1;
    for (const i of alive) for (const j of alive) if (i < j && score[i * n + j]! < best) [best, bi, bj] = [score[i * n + j]!, i, j];
    if (best > 0 && alive.size <= max) break;
    accumulate(stats[bi]!, stats[bj]!);
    logDet[bi] = logDeterminant(stats[bi]!);
    alive.delete(bj);
    for (let k = 0; k < n; k++) if (clusterOf[k] === bj) clusterOf[k] = bi;
    for (const k of alive) if (k !== bi) score[Math.min(k, bi) * n + Math.max(k, bi)] = pair(Math.min(k, bi), Math.max(k, bi));
  }
  return clusterOf;
}

/** Consecutive pieces of one cluster, less than JOIN_GAP apart, as one turn. */
export function turnsOf(pieces: SpeechPiece[], clusters: number[]): SpeakerTurn[] {
  const turns: { speaker: number; start: number; end: number }[] = [];
  pieces.forEach((p, i) => {
    const last = turns.at(-1);
    if (last && last.speaker === clusters[i] && p.start - last.end < JOIN_GAP) last.end = p.end;
    else turns.push({ speaker: clusters[i]!, start: p.start, end: p.end });
  });
  return numberSpeakers(turns);
}

/**
 * The classic, weight-free diarizer (decision 097): cepstral features of the voiced
 * frames in the VAD's speech regions, speaker changes by ΔBIC, and agglomerative
 * clustering with BIC as the stopping rule. No model file; a few ms per minute of audio.
 */
export class ClassicDiarizer implements Diarizer {
  readonly kind = "classic";
  readonly model = "classic-bic-mfcc";
  readonly voiceprints = new ClassicVoiceprinter(voicedStats);

  /** Other penalties than the learnt ones only for the bench that learns them. */
  constructor(private readonly penalties: Penalties = PENALTIES) {}

  async diarize(pcm16k: Float32Array, regions: SpeechRegion[], hint: SpeakerCountHint, signal?: AbortSignal): Promise<SpeakerTurn[]> {
    const pieces = speechPieces(
      pcm16k,
      [...regions].sort((a, b) => a.start - b.start),
      this.penalties.change,
      signal,
    );
    if (pieces.length === 0) return [];
    return turnsOf(pieces, clusterPieces(pieces, hint, this.penalties.cluster, signal));
  }
}
