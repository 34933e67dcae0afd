import type { SpeechAnalysis, SpeechRegion, VoiceActivityDetector } from "./vad";

const FRAME = 480; // 30 ms

/**
 * TEST DOUBLE: voice activity by loudness (RMS over 30 ms frames; probability 1 when loud,
 * else 0), deterministic on generated tones and silence. Silero VAD is the real detector
 * and what pipeline tests use; this one is left for tests that upload a plain tone.
 */
export class EnergyTestVad implements VoiceActivityDetector {
  constructor(private readonly threshold = 0.01) {}

  async analyse(pcm16k: Float32Array): Promise<SpeechAnalysis> {
    const probabilities = new Float32Array(Math.ceil(pcm16k.length / FRAME));
    const regions: SpeechRegion[] = [];
    let open: number | null = null;
    for (let f = 0; f < probabilities.length; f++) {
      const i = f * FRAME;
      let sum = 0;
      const end = Math.min(pcm16k.length, i + FRAME);
      for (let j = i; j < end; j++) sum += (pcm16k[j] ?? 0) ** 2;
      const loud = Math.sqrt(sum / (end - i)) > this.threshold;
      probabilities[f] = loud ? 1 : 0;
      if (loud && open === null) open = i;
      if (!loud && open !== null) {
        regions.push({ start: open / 16_000, end: i / 16_000 });
        open = null;
      }
    }
    if (open !== null) regions.push({ start: open / 16_000, end: pcm16k.length / 16_000 });
    return { regions, frameSeconds: FRAME / 16_000, probabilities };
  }
}
