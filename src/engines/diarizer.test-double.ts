import type { Diarizer, SpeakerTurn } from "./diarizer";
import type { SpeechRegion } from "./vad";

/**
 * TEST DOUBLE: two speakers taking turns at fixed times, for pipeline tests whose audio is
 * no voice (synthetic bursts under a scripted transcriber). Each speech region is cut at
 * the turn times inside it; SPEAKER_1 speaks until the first, SPEAKER_2 until the next,
 * and so on. The real diarizer's own tests run on espeak-ng speech.
 */
export class TwoSpeakerTestDiarizer implements Diarizer {
  readonly kind = "classic";
  readonly model = "test-two-speaker-diarizer";
  readonly voiceprints = null;

  constructor(private readonly turnsAt: number[]) {}

  async diarize(_pcm16k: Float32Array, regions: SpeechRegion[]): Promise<SpeakerTurn[]> {
    const speakerAt = (t: number) => `SPEAKER_${(this.turnsAt.filter((at) => at <= t).length % 2) + 1}`;
    return regions.flatMap((r) => {
      const edges = [r.start, ...this.turnsAt.filter((t) => t > r.start && t < r.end), r.end];
      return edges.slice(1).map((end, i) => ({ speaker: speakerAt(edges[i]!), start: edges[i]!, end }));
    });
  }
}
