import type { Diarizer } from "./diarizer";
import type { SpeechRegion } from "./vad";

/**
 * TEST DOUBLE: two speakers taking turns at fixed times. No diarization model is small
 * enough for CI (decision 043), so the multi-speaker path of the pipeline is tested with
 * this: a segment starting before the first turn is SPEAKER_1, after it SPEAKER_2, after
 * the next SPEAKER_1 again, and so on. Labels depend on absolute segment times, so a test
 * also sees that the diarizer was given times from the start of the recording.
 */
export class TwoSpeakerTestDiarizer implements Diarizer {
  readonly model = "test-two-speaker-diarizer";

  constructor(private readonly turnsAt: number[]) {}

  async label(_pcm16k: Float32Array, segments: SpeechRegion[]): Promise<string[]> {
    return segments.map((s) => `SPEAKER_${(this.turnsAt.filter((t) => t <= s.start).length % 2) + 1}`);
  }
}
