import { existsSync } from "node:fs";
import type { InferenceSession } from "onnxruntime-node";
import type { RuntimeFiles } from "../runtime/files";
import { useOnnxruntimeFrom } from "../runtime/onnxruntime";
import { type Diarizer, numberSpeakers, type SpeakerCountHint, type SpeakerTurn, type Voiceprinter } from "./diarizer";
import { MissingModelError } from "./missing-model";
import { samplesOfSpans } from "./pcm-spans";
import { FBANK_BINS, fbank } from "./speaker-features";
import type { SpeechRegion } from "./vad";

const RATE = 16_000;
/** pyannote segmentation-3.0 looks at 10 s at a time. */
const WINDOW_SECONDS = 10;
/** Its 7 powerset classes: who of three local speakers is talking in a frame. */
const POWERSET: number[][] = [[], [0], [1], [2], [0, 1], [0, 2], [1, 2]];
/** A local speaker with less speech than this in a window gives no embedding (seconds). */
const MIN_EMBEDDED_SECONDS = 0.5;
/** Clusters of embeddings merge while their mean cosine similarity is at least this. */
const MERGE_SIMILARITY = 0.5;

type Ort = typeof import("onnxruntime-node");
type Sessions = { ort: Ort; segmentation: InferenceSession; embedding: InferenceSession };
/** One local speaker's stretches in one window, and its voice embedding. */
type LocalSpeaker = { runs: SpeechRegion[]; embedding: Float32Array };

const cosine = (a: Float32Array | number[], b: Float32Array | number[]) => {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! ** 2;
    nb += b[i]! ** 2;
  }
  return dot / Math.sqrt(na * nb || 1);
};

/**
 * The neural diarizer, chosen over the classic one when its two models are installed
 * (decision 097): pyannote segmentation-3.0 finds up to three local speakers per 10 s
 * window, a speaker-embedding model (WeSpeaker or 3D-Speaker, 80-bin fbank in, one vector
 * out) embeds each, and the embeddings are clustered across windows by cosine similarity.
 * Input and output names are read from the models, so other exports of them load too.
 */
export class NeuralDiarizer implements Diarizer {
  readonly kind = "neural";
  readonly model: string;
  readonly voiceprints: Voiceprinter;
  private sessions: Promise<Sessions> | null = null;

  constructor(
    private readonly files: { segmentation: string; embedding: string; names: { segmentation: string; embedding: string } },
    private readonly runtime?: RuntimeFiles,
  ) {
    this.model = `${files.names.segmentation} + ${files.names.embedding}`;
    // A print is the speaker embedding; several samples pool as the mean of their unit vectors.
    this.voiceprints = {
      threshold: 0.5,
      voiceprint: (pcm16k, spans) => this.print(pcm16k, spans),
      pool: (prints) => prints[0]!.map((_, i) => prints.reduce((sum, p) => sum + p[i]! / Math.sqrt(p.reduce((n, x) => n + x * x, 0) || 1), 0) / prints.length),
      similarity: (a, b) => Math.max(0, cosine(a, b)),
    };
  }

  private load(): Promise<Sessions> {
    this.sessions ??= (async () => {
      for (const [name, path] of [
        [this.files.names.segmentation, this.files.segmentation],
        [this.files.names.embedding, this.files.embedding],
      ] as const) {
        if (!existsSync(path)) throw new MissingModelError(name, "diarization", path);
      }
      const onnxruntime = this.runtime?.folder("onnxruntime");
      if (onnxruntime) useOnnxruntimeFrom(onnxruntime);
      const ort = await import("onnxruntime-node");
      const options = { intraOpNumThreads: 1, interOpNumThreads: 1 };
      return {
        ort,
        segmentation: await ort.InferenceSession.create(this.files.segmentation, options),
        embedding: await ort.InferenceSession.create(this.files.embedding, options),
      };
    })().catch((err) => {
      this.sessions = null;
      throw err;
    });
    return this.sessions;
  }

  /** The embedding of some speech: fbank features through the embedding model. */
  private async embed(s: Sessions, samples: Float32Array): Promise<Float32Array> {
    const { frames, features } = fbank(samples);
    const out = await s.embedding.run({ [s.embedding.inputNames[0]!]: new s.ort.Tensor("float32", features, [1, frames, FBANK_BINS]) });
    return Float32Array.from(out[s.embedding.outputNames[0]!]!.data as Float32Array);
  }

  /** Who of up to three local speakers talks in each frame of one window, as runs per local speaker. */
  private async segment(s: Sessions, pcm16k: Float32Array, window: SpeechRegion): Promise<SpeechRegion[][]> {
    const samples = pcm16k.subarray(Math.floor(window.start * RATE), Math.ceil(window.end * RATE));
    const out = await s.segmentation.run({ [s.segmentation.inputNames[0]!]: new s.ort.Tensor("float32", Float32Array.from(samples), [1, 1, samples.length]) });
    const logits = out[s.segmentation.outputNames[0]!]!;
    const [, frames, classes] = logits.dims as number[];
    const data = logits.data as Float32Array;
    const step = (window.end - window.start) / frames!;
    const runs: SpeechRegion[][] = [[], [], []];
    for (let f = 0; f < frames!; f++) {
      let best = 0;
      for (let c = 1; c < classes!; c++) if (data[f * classes! + c]! > data[f * classes! + best]!) best = c;
      for (const k of POWERSET[best] ?? []) {
        const start = window.start + f * step;
        const last = runs[k]!.at(-1);
        if (last && Math.abs(last.end - start) < step / 2) last.end = start + step;
        else runs[k]!.push({ start, end: start + step });
      }
    }
    return runs;
  }

  /** The embedding of the spans' speech as a voiceprint; null with less than MIN_EMBEDDED_SECONDS of it. */
  private async print(pcm16k: Float32Array, spans: SpeechRegion[]): Promise<number[] | null> {
    const samples = samplesOfSpans(pcm16k, spans, RATE);
    if (samples.length < MIN_EMBEDDED_SECONDS * RATE) return null;
    return [...(await this.embed(await this.load(), samples))];
  }

  async diarize(pcm16k: Float32Array, regions: SpeechRegion[], hint: SpeakerCountHint, signal?: AbortSignal): Promise<SpeakerTurn[]> {
    const s = await this.load();
    const locals: LocalSpeaker[] = [];
    for (const region of [...regions].sort((a, b) => a.start - b.start)) {
      for (let start = region.start; start < region.end; start += WINDOW_SECONDS) {
        signal?.throwIfAborted();
        const window = { start, end: Math.min(region.end, start + WINDOW_SECONDS) };
        // A tail too short to embed adds no speaker, and may be shorter than the model's filters.
        if (window.end - window.start < MIN_EMBEDDED_SECONDS) continue;
        for (const runs of await this.segment(s, pcm16k, window)) {
          const speech = samplesOfSpans(pcm16k, runs, RATE);
          if (speech.length >= MIN_EMBEDDED_SECONDS * RATE) locals.push({ runs, embedding: await this.embed(s, speech) });
        }
      }
    }
    const clusters = clusterEmbeddings(
      locals.map((l) => l.embedding),
      hint,
    );
    const turns = locals.flatMap((l, i) => l.runs.map((r) => ({ speaker: clusters[i]!, start: r.start, end: r.end }))).sort((a, b) => a.start - b.start);
    // Overlapped speech goes to whoever started first, until the other starts.
    const sequential: typeof turns = [];
    for (const t of turns) {
      const last = sequential.at(-1);
      if (last && last.speaker === t.speaker && t.start - last.end < 0.5) last.end = Math.max(last.end, t.end);
      else {
        if (last && last.end > t.start) last.end = t.start;
        sequential.push({ ...t });
      }
    }
    return numberSpeakers(sequential.filter((t) => t.end > t.start));
  }
}

/** Average-linkage agglomerative clustering by cosine similarity, bounded by the hint. */
export function clusterEmbeddings(embeddings: Float32Array[], hint: SpeakerCountHint): number[] {
  const clusterOf = embeddings.map((_, i) => i);
  const members = new Map(embeddings.map((_, i) => [i, [i]]));
  const min = Math.max(1, hint.minSpeakers ?? 1);
  const max = Math.max(min, hint.maxSpeakers ?? Number.POSITIVE_INFINITY);
  const similarity = (a: number[], b: number[]) =>
    a.reduce((sum, i) => sum + b.reduce((s2, j) => s2 + cosine(embeddings[i]!, embeddings[j]!), 0), 0) / (a.length * b.length);
  while (members.size > min) {
    let best = Number.NEGATIVE_INFINITY;
    let pair: [number, number] | null = null;
    for (const [i, a] of members)
      for (const [j, b] of members)
        if (i < j) {
          const s = similarity(a, b);
          if (s > best) [best, pair] = [s, [i, j]];
        }
    if (!pair || (best < MERGE_SIMILARITY && members.size <= max)) break;
    const [i, j] = pair;
    members.set(i, [...members.get(i)!, ...members.get(j)!]);
    members.delete(j);
    for (const k of members.get(i)!) clusterOf[k] = i;
  }
  return clusterOf;
}
