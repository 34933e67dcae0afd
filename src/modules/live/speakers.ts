import type { Diarizer } from "../../engines/diarizer";
import type { SpeechRegion } from "../../engines/vad";

/** Prints kept per provisional speaker: its latest regions' (enough to pool a voice, and the row stays small). */
const PRINTS_PER_SPEAKER = 8;

/**
 * The provisional speaker of a region transcribed while the recording streams (decision 175):
 * its voiceprint against those of the speakers heard so far, the most alike one at the
 * printer's threshold or more, else a new SPEAKER_n (up to `maxSpeakers`, then the most alike).
 * Null when the region is too short to tell a voice by, or the diarizer keeps no prints:
 * the completed transcription says. A diarizer that tells no speakers apart (kind none, or
 * one speaker at most) has SPEAKER_1 only, as at completion.
 */
export async function provisionalSpeaker(
  diarizer: Diarizer,
  pcm: Float32Array,
  region: SpeechRegion,
  known: number[][][],
  maxSpeakers: number | null,
): Promise<{ speaker: string | null; prints: number[][][] }> {
  if (diarizer.kind === "none" || maxSpeakers === 1) return { speaker: "SPEAKER_1", prints: known };
  const printer = diarizer.voiceprints;
  const print = printer ? await printer.voiceprint(pcm, [region]) : null;
  if (!printer || !print) return { speaker: null, prints: known };
  let best = -1;
  let score = Number.NEGATIVE_INFINITY;
  for (const [i, prints] of known.entries()) {
    const s = printer.similarity(print, printer.pool(prints));
    if (s > score) [best, score] = [i, s];
  }
  const full = maxSpeakers !== null && known.length >= maxSpeakers;
  if (best >= 0 && (score >= printer.threshold || full)) {
    return { speaker: `SPEAKER_${best + 1}`, prints: known.map((p, i) => (i === best ? [...p, print].slice(-PRINTS_PER_SPEAKER) : p)) };
  }
  return { speaker: `SPEAKER_${known.length + 1}`, prints: [...known, [print]] };
}
