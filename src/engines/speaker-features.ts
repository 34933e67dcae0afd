/**
 * Short-window cepstral features of 16 kHz speech for the classic diarizer (decision 097):
 * 25 ms Hamming windows every 10 ms, a 512-point FFT, 24 mel bands from 100 Hz to 7.6 kHz,
 * their log energies, and the DCT of those minus its first coefficient (c0 is loudness,
 * which says more about the distance to the microphone than about the speaker).
 */
import { RealPowerSpectrum } from "./speaker-fft";

export const FEATURE_RATE = 100; // frames per second
export const CEPSTRA = 12;

const SAMPLE_RATE = 16_000;
const WINDOW = 400;
const HOP = SAMPLE_RATE / FEATURE_RATE;
const FFT_SIZE = 512;
const BANDS = 24;
const PRE_EMPHASIS = 0.97;

/** Frames of `CEPSTRA` coefficients, row after row, with each frame's log energy (for silence gating). */
export type CepstralFrames = { count: number; cepstra: Float32Array; logEnergy: Float32Array };

const hamming = Float64Array.from({ length: WINDOW }, (_, i) => 0.54 - 0.46 * Math.cos((2 * Math.PI * i) / (WINDOW - 1)));
const melOf = (hz: number) => 2595 * Math.log10(1 + hz / 700);
const hzOf = (mel: number) => 700 * (10 ** (mel / 2595) - 1);

/** Triangular mel filters over the FFT bins from `lowHz` to `highHz`, each as [first bin, weights]. */
function melFilters(bands: number, lowHz: number, highHz: number): [number, Float64Array][] {
  const low = melOf(lowHz);
  const high = melOf(highHz);
  const edges = Array.from({ length: bands + 2 }, (_, i) => (hzOf(low + ((high - low) * i) / (bands + 1)) * FFT_SIZE) / SAMPLE_RATE);
  return Array.from({ length: bands }, (_, b) => {
    const [l, c, r] = [edges[b]!, edges[b + 1]!, edges[b + 2]!];
    const first = Math.ceil(l);
    const weights = new Float64Array(Math.max(0, Math.floor(r) - first + 1));
    for (let k = first; k <= Math.floor(r); k++) weights[k - first] = k <= c ? (k - l) / (c - l) : (r - k) / (r - c);
    return [first, weights] as [number, Float64Array];
  });
}
const filters = melFilters(BANDS, 100, 7600);

/** DCT-II rows 1..CEPSTRA over the band log energies. */
const dct = Array.from({ length: CEPSTRA }, (_, q) => Float64Array.from({ length: BANDS }, (_, b) => Math.cos((Math.PI * (q + 1) * (b + 0.5)) / BANDS)));

/** One for both feature kinds: it keeps its work arrays, and features are computed one recording at a time. */
const spectrum = new RealPowerSpectrum(FFT_SIZE);

/**
 * Log mel-band energies of 25 ms frames every 10 ms over samples `first` to `last`, one
 * row of `bank.length` values per frame, with each frame's log energy.
 */
function logMelFrames(
  pcm16k: Float32Array,
  first: number,
  last: number,
  bank: [number, Float64Array][],
): { count: number; bands: Float32Array; logEnergy: Float32Array } {
  const count = Math.max(0, Math.floor((last - first - WINDOW) / HOP) + 1);
  const bands = new Float32Array(count * bank.length);
  const logEnergy = new Float32Array(count);
  const frame = new Float64Array(FFT_SIZE);
  const power = new Float64Array(FFT_SIZE / 2 + 1);
  const firstBins = Int32Array.from(bank, ([firstBin]) => firstBin);
  const weights = bank.map(([, w]) => w);
  // Pre-emphasised once: the windows overlap two and a half times.
  const emphasised = new Float64Array(Math.max(0, last - first));
  for (let i = first; i < last; i++) emphasised[i - first] = pcm16k[i]! - PRE_EMPHASIS * (i > 0 ? pcm16k[i - 1]! : 0);
  for (let f = 0; f < count; f++) {
    const offset = f * HOP;
    let energy = 0;
    for (let i = 0; i < WINDOW; i++) {
      const x = emphasised[offset + i]!;
      frame[i] = x * hamming[i]!;
      energy += x * x;
    }
    logEnergy[f] = Math.log(energy + 1e-10);
    // frame[WINDOW..] stays zero: the window is padded to the FFT's size.
    spectrum.compute(frame, power);
    for (let b = 0; b < weights.length; b++) {
      const w = weights[b]!;
      const firstBin = firstBins[b]!;
      let sum = 0;
      for (let k = 0; k < w.length; k++) sum += w[k]! * power[firstBin + k]!;
      bands[f * weights.length + b] = Math.log(sum + 1e-10);
    }
  }
  return { count, bands, logEnergy };
}

/** Cepstral frames of the samples from `start` to `end` seconds; frame f starts at start + f / FEATURE_RATE. */
export function cepstralFrames(pcm16k: Float32Array, start: number, end: number): CepstralFrames {
  const first = Math.max(0, Math.round(start * SAMPLE_RATE));
  const last = Math.min(pcm16k.length, Math.round(end * SAMPLE_RATE));
  const { count, bands, logEnergy } = logMelFrames(pcm16k, first, last, filters);
  const cepstra = new Float32Array(count * CEPSTRA);
  for (let f = 0; f < count; f++) {
    for (let q = 0; q < CEPSTRA; q++) {
      const row = dct[q]!;
      let c = 0;
      for (let b = 0; b < BANDS; b++) c += row[b]! * bands[f * BANDS + b]!;
      cepstra[f * CEPSTRA + q] = c;
    }
  }
  return { count, cepstra, logEnergy };
}

export const FBANK_BINS = 80;
const fbankFilters = melFilters(FBANK_BINS, 20, 7600);

/**
 * Kaldi-style filterbank features for speaker-embedding models (WeSpeaker, 3D-Speaker):
 * 80 log mel bands every 10 ms of all of `pcm16k`, the mean over time subtracted.
 */
export function fbank(pcm16k: Float32Array): { frames: number; features: Float32Array } {
  const { count, bands } = logMelFrames(pcm16k, 0, pcm16k.length, fbankFilters);
  for (let b = 0; b < FBANK_BINS; b++) {
    let mean = 0;
    for (let f = 0; f < count; f++) mean += bands[f * FBANK_BINS + b]!;
    mean /= Math.max(1, count);
    for (let f = 0; f < count; f++) bands[f * FBANK_BINS + b]! -= mean;
  }
  return { frames: count, features: bands };
}

/** Pitch is looked for between these frequencies (Hz): below a deep man's voice to above a child's. */
const PITCH_LOW = 60;
const PITCH_HIGH = 400;
/** The signal is decimated by this much for pitch (to 4 kHz): plenty for a fundamental under 400 Hz, a 16th of the work. */
const DECIMATE = 4;
/** Pitch windows: 32 ms, two periods of the lowest pitch. */
const PITCH_WINDOW = 128;
/** A frame whose best normalised autocorrelation is below this has no clear period: not voiced. */
const VOICING = 0.6;
/** The period is the first autocorrelation peak at least this share of the highest (not one of its multiples). */
const OCTAVE = 0.9;

/**
 * Log fundamental frequency of each 10 ms frame from `start` to `end` seconds, aligned with
 * cepstralFrames' frames, or NaN where the frame has no clear period (unvoiced, silence):
 * the lag of the highest normalised autocorrelation of the 4 kHz signal over 32 ms.
 * `wanted`, if given: 1 for the frames whose pitch is needed at all (the search is most of
 * the cost; a frame not wanted is NaN unless the other frame of its pair is wanted).
 */
export function logPitch(pcm16k: Float32Array, start: number, end: number, wanted?: Uint8Array): Float32Array {
  const first = Math.max(0, Math.round(start * SAMPLE_RATE));
  const last = Math.min(pcm16k.length, Math.round(end * SAMPLE_RATE));
  const count = Math.max(0, Math.floor((last - first - WINDOW) / HOP) + 1);
  const rate = SAMPLE_RATE / DECIMATE;
  const [minLag, maxLag] = [Math.floor(rate / PITCH_HIGH), Math.ceil(rate / PITCH_LOW)];
  // Box-filtered decimation (its first null at 4 kHz keeps most aliasing out of the pitch range).
  const length = Math.floor((last - first) / DECIMATE);
  const x = new Float64Array(length + maxLag + PITCH_WINDOW);
  for (let i = 0; i < length; i++) {
    let s = 0;
    for (let k = 0; k < DECIMATE; k++) s += pcm16k[first + i * DECIMATE + k]!;
    x[i] = s / DECIMATE;
  }
  // energy[i]: sum of squares of x[0..i-1], so any window's energy is a difference.
  const energy = new Float64Array(x.length + 1);
  for (let i = 0; i < x.length; i++) energy[i + 1] = energy[i]! + x[i]! * x[i]!;
  const out = new Float32Array(count).fill(Number.NaN);
  const hop = HOP / DECIMATE;
  const nccf = new Float64Array(maxLag + 2);
  const products = new Float64Array(maxLag + 4);
  // Every other frame, the next one taking its value: pitch moves slowly, and this halves the work.
  for (let f = 0; f < count; f += 2) {
    if (wanted && !wanted[f] && !(f + 1 < count && wanted[f + 1])) continue;
    const o = f * hop;
    const e0 = energy[o + PITCH_WINDOW]! - energy[o]!;
    if (e0 <= 1e-10) continue;
    // Four lags at a time, each summed in the same order as alone (the same values), with a
    // quarter of the loads of the window; the last group may run past maxLag, into `products` only.
    for (let lag = minLag; lag <= maxLag; lag += 4) {
      let r0 = 0;
      let r1 = 0;
      let r2 = 0;
      let r3 = 0;
      for (let i = 0; i < PITCH_WINDOW; i++) {
        const xi = x[o + i]!;
        const j = o + i + lag;
        r0 += xi * x[j]!;
        r1 += xi * x[j + 1]!;
        r2 += xi * x[j + 2]!;
        r3 += xi * x[j + 3]!;
      }
      products[lag] = r0;
      products[lag + 1] = r1;
      products[lag + 2] = r2;
      products[lag + 3] = r3;
    }
    let best = 0;
    for (let lag = minLag; lag <= maxLag; lag++) {
      const el = energy[o + lag + PITCH_WINDOW]! - energy[o + lag]!;
      nccf[lag] = products[lag]! / Math.sqrt(e0 * el + 1e-20);
      best = Math.max(best, nccf[lag]!);
    }
    if (best < VOICING) continue;
    // The first peak nearly as high as the highest: a period's multiples correlate as well as the period.
    for (let lag = minLag; lag <= maxLag; lag++) {
      if (nccf[lag]! >= OCTAVE * best && nccf[lag]! >= nccf[lag - 1]! && nccf[lag]! >= (nccf[lag + 1] ?? 0)) {
        out[f] = Math.log(rate / lag);
        if (f + 1 < count) out[f + 1] = out[f]!;
        break;
      }
    }
  }
  return out;
}
