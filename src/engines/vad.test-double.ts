import type { SpeechRegion, VoiceActivityDetector } from "./vad";

/**
 * TEST DOUBLE: voice activity by loudness (RMS over 30 ms frames), deterministic on
 * generated tones and silence. Silero VAD is the real detector.
 */
export class EnergyTestVad implements VoiceActivityDetector {
  constructor(private readonly threshold = 0.01) {}

  async detect(pcm16k: Float32Array): Promise<SpeechRegion[]> {
    const frame = 480;
    const regions: SpeechRegion[] = [];
    let open: number | null = null;
    for (let i = 0; i < pcm16k.length; i += frame) {
      let sum = 0;
      const end = Math.min(pcm16k.length, i + frame);
      for (let j = i; j < end; j++) sum += (pcm16k[j] ?? 0) ** 2;
      const loud = Math.sqrt(sum / (end - i)) > this.threshold;
      if (loud && open === null) open = i;
      if (!loud && open !== null) {
        regions.push({ start: open / 16_000, end: i / 16_000 });
        open = null;
      }
    }
    if (open !== null) regions.push({ start: open / 16_000, end: pcm16k.length / 16_000 });
    return regions;
  }
}
