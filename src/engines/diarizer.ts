import type { SpeechRegion } from "./vad";

/** Who spoke each segment. */
export interface Diarizer {
  /** The diarization model, or null when none is installed: every segment is then SPEAKER_1 and transcriptions say diarization "none". */
  readonly model: string | null;
  /** One speaker id (SPEAKER_1, SPEAKER_2, ...) per segment, in order. */
  label(pcm16k: Float32Array, segments: SpeechRegion[], signal?: AbortSignal): Promise<string[]>;
}

/**
 * The default: no speaker model ships with Parley (none is small enough to bundle or
 * reachable to download here), so every segment is SPEAKER_1 and the transcription says
 * diarization "none" rather than inventing speakers (decision 043).
 */
export class SingleSpeakerDiarizer implements Diarizer {
  readonly model = null;

  async label(_pcm16k: Float32Array, segments: SpeechRegion[]): Promise<string[]> {
    return segments.map(() => "SPEAKER_1");
  }
}
