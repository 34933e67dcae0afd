import type { SpeechRegion } from "./vad";

/** One stretch of one speaker, in seconds from the start of the audio; speakers are SPEAKER_1..N in order of first appearance. */
export type SpeakerTurn = { speaker: string; start: number; end: number };

/** Which kind of diarizer ran, as transcriptions report it. */
export type DiarizationKind = "classic" | "neural" | "none";

/** How many speakers to look for: a hint from the configuration or the request. */
export type SpeakerCountHint = { minSpeakers?: number | null; maxSpeakers?: number | null };

/**
 * Voiceprints of a diarizer's own kind (decision 098): a fixed-length vector summing up a
 * voice, and how alike two are. Known voices are matched only against prints of the kind
 * of the diarizer that ran.
 */
export interface Voiceprinter {
  /** The print of the speech in `spans` (seconds), or null when there is too little of it to tell a voice by. */
  voiceprint(pcm16k: Float32Array, spans: SpeechRegion[]): Promise<number[] | null>;
  /** The print of several samples of one voice taken together. */
  pool(prints: number[][]): number[];
  /** 0-1: how alike two prints are. */
  similarity(a: number[], b: number[]): number;
  /** A similarity from which two prints count as one voice. */
  readonly threshold: number;
}

/** Who spoke when. */
export interface Diarizer {
  readonly kind: DiarizationKind;
  /** Its voiceprints, or null for a diarizer that keeps none. */
  readonly voiceprints: Voiceprinter | null;
  /** What runs (for `parley doctor`): a model name, or the classic method's name. */
  readonly model: string;
  /** Turns over the speech regions, in time order; [] when there is no speech. */
  diarize(pcm16k: Float32Array, regions: SpeechRegion[], hint: SpeakerCountHint, signal?: AbortSignal): Promise<SpeakerTurn[]>;
}

/** Speakers numbered in order of first appearance, whatever the clustering called them. */
export function numberSpeakers<T extends { speaker: string | number }>(turns: T[]): (Omit<T, "speaker"> & { speaker: string })[] {
  const ids = new Map<string | number, string>();
  return turns.map((t) => {
    if (!ids.has(t.speaker)) ids.set(t.speaker, `SPEAKER_${ids.size + 1}`);
    return { ...t, speaker: ids.get(t.speaker)! };
  });
}

/**
 * No diarization: one turn per speech region, all SPEAKER_1, and transcriptions say
 * diarization "none". Used where speakers are not wanted (the transcription bench) or a
 * hint allows only one speaker.
 */
export class SingleSpeakerDiarizer implements Diarizer {
  readonly kind = "none";
  readonly model = "none";
  readonly voiceprints = null;

  async diarize(_pcm16k: Float32Array, regions: SpeechRegion[]): Promise<SpeakerTurn[]> {
    return regions.map((r) => ({ speaker: "SPEAKER_1", start: r.start, end: r.end }));
  }
}
