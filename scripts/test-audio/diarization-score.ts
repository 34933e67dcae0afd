// How a diarizer's turns compare with the truth of a test conversation: the diarization
// error rate and how far each true speaker change is from the nearest found one. Used by
// the diarizer's tests and bench/diarize.ts.
import type { SpeakerTurn } from "../../src/engines/diarizer";
import type { TruthTurn } from "./espeak-conversation";

const STEP = 0.01;
/** NIST's forgiveness collar around each true turn edge (seconds), where no error counts. */
export const COLLAR = 0.25;

/** Per 10 ms step: the speaker there (-1 for none), or -2 inside a collar. */
function timeline(turns: { speaker: number; start: number; end: number }[], length: number, collar = 0): Int32Array {
  const line = new Int32Array(length).fill(-1);
  for (const t of turns) for (let i = Math.round(t.start / STEP); i < Math.min(length, Math.round(t.end / STEP)); i++) line[i] = t.speaker;
  if (collar > 0) {
    for (const t of turns) {
      for (const edge of [t.start, t.end]) {
        for (let i = Math.max(0, Math.round((edge - collar) / STEP)); i < Math.min(length, Math.round((edge + collar) / STEP)); i++) line[i] = -2;
      }
    }
  }
  return line;
}

function permutations(n: number, k: number): number[][] {
  if (k === 0) return [[]];
  return permutations(n, k - 1).flatMap((p) => [...Array(n).keys()].filter((x) => !p.includes(x)).map((x) => [...p, x]));
}

/**
 * Diarization error rate (missed speech + false alarm + speaker confusion over the true
 * speech, outside a COLLAR around true edges) under the best one-to-one mapping of found
 * speakers to true ones.
 */
export function diarizationErrorRate(truth: TruthTurn[], found: SpeakerTurn[]): number {
  const hypIds = [...new Set(found.map((t) => t.speaker))];
  const refIds = [...new Set(truth.map((t) => t.speaker))];
  const refCount = refIds.length;
  const end = Math.max(...truth.map((t) => t.end), ...found.map((t) => t.end));
  const length = Math.ceil(end / STEP) + 1;
  const ref = timeline(
    truth.map((t) => ({ ...t, speaker: refIds.indexOf(t.speaker) })),
    length,
    COLLAR,
  );
  const hyp = timeline(
    found.map((t) => ({ ...t, speaker: hypIds.indexOf(t.speaker) })),
    length,
  );
  const slots = Math.max(refCount, hypIds.length);
  let best = Number.POSITIVE_INFINITY;
  // Found speaker h stands for true speaker mapping[h] (beyond the true count: nobody).
  for (const mapping of permutations(slots, hypIds.length)) {
    let errors = 0;
    for (let i = 0; i < length; i++) {
      const r = ref[i]!;
      if (r === -2) continue;
      const h = hyp[i]!;
      if (r === -1) errors += h === -1 ? 0 : 1;
      else errors += h === -1 || mapping[h] !== r ? 1 : 0;
    }
    best = Math.min(best, errors);
  }
  let speech = 0;
  for (const r of ref) if (r >= 0) speech++;
  return best / Math.max(1, speech);
}

/** For each true change of speaker, the distance (seconds) to the nearest found change. */
export function boundaryErrors(truth: TruthTurn[], found: SpeakerTurn[]): number[] {
  const changes = (turns: { speaker: unknown; start: number; end: number }[]) =>
    turns.slice(1).flatMap((t, i) => (t.speaker === turns[i]!.speaker ? [] : [(turns[i]!.end + t.start) / 2]));
  const foundChanges = changes(found);
  return changes(truth).map((c) => Math.min(...foundChanges.map((f) => Math.abs(f - c))));
}
