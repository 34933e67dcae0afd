/**
 * How a diarizer's turns compare with labelled truth (issue 26): the diarization error rate
 * with NIST's 0.25 s collar, whether the speaker count is right, and how far each true
 * change of speaker lies from a found one. Shared by `parley eval speakers`, the bench and
 * the tests, so all three score alike.
 */

/** A stretch of one speaker, in seconds; speakers are any labels (RTTM names, numbers). */
export type LabelledTurn = { speaker: string | number; start: number; end: number };

const STEP = 0.01;
/** NIST's forgiveness collar around each true turn edge (seconds), where no error counts. */
export const COLLAR = 0.25;
/** A true change of speaker counts as found when a found change lies this close (seconds). */
export const CHANGE_TOLERANCE = 1;

/** Per speaker, per 10 ms step: 1 where they speak. */
function activity(turns: LabelledTurn[], ids: (string | number)[], length: number): Uint8Array[] {
  const lines = ids.map(() => new Uint8Array(length));
  for (const t of turns) {
    const line = lines[ids.indexOf(t.speaker)]!;
    for (let i = Math.max(0, Math.round(t.start / STEP)); i < Math.min(length, Math.round(t.end / STEP)); i++) line[i] = 1;
  }
  return lines;
}

/** The largest total of `overlap[h][r]` with each found speaker h given at most one true r, each r at most once. */
function bestMapping(overlap: number[][], refCount: number): number {
  // Over subsets of true speakers already taken: a small dynamic programme, exact up to ~16 true speakers.
  let best = new Float64Array(1 << refCount);
  for (const row of overlap) {
    const next = Float64Array.from(best);
    for (let used = 0; used < best.length; used++) {
      for (let r = 0; r < refCount; r++) {
        if (used & (1 << r)) continue;
        const to = used | (1 << r);
        next[to] = Math.max(next[to]!, best[used]! + row[r]!);
      }
    }
    best = next;
  }
  return Math.max(...best);
}

/**
 * Diarization error rate: missed speech, false alarm and speaker confusion over the true
 * speech, outside a COLLAR around every true turn edge, under the best one-to-one mapping
 * of found speakers to true ones. Overlapping true speech counts each speaker.
 */
export function diarizationErrorRate(truth: LabelledTurn[], found: LabelledTurn[], collar = COLLAR): number {
  const refIds = [...new Set(truth.map((t) => t.speaker))];
  const hypIds = [...new Set(found.map((t) => t.speaker))];
  if (refIds.length > 16) throw new Error("diarization error rate: more than 16 true speakers");
  const end = Math.max(0, ...truth.map((t) => t.end), ...found.map((t) => t.end));
  const length = Math.ceil(end / STEP) + 1;
  const ref = activity(truth, refIds, length);
  const hyp = activity(found, hypIds, length);
  const scored = new Uint8Array(length).fill(1);
  for (const t of truth) {
    for (const edge of [t.start, t.end]) {
      for (let i = Math.max(0, Math.round((edge - collar) / STEP)); i < Math.min(length, Math.round((edge + collar) / STEP)); i++) scored[i] = 0;
    }
  }
  let speech = 0;
  let worst = 0;
  for (let i = 0; i < length; i++) {
    if (!scored[i]) continue;
    let [r, h] = [0, 0];
    for (const line of ref) r += line[i]!;
    for (const line of hyp) h += line[i]!;
    speech += r;
    worst += Math.max(r, h);
  }
  const overlap = hyp.map((h) =>
    ref.map((r) => {
      let both = 0;
      for (let i = 0; i < length; i++) both += scored[i]! & h[i]! & r[i]!;
      return both;
    }),
  );
  return (worst - bestMapping(overlap, refIds.length)) / Math.max(1, speech);
}

/** The times where the speaker changes: midway between consecutive turns of different speakers. */
function changes(turns: LabelledTurn[]): number[] {
  const sorted = [...turns].sort((a, b) => a.start - b.start);
  return sorted.slice(1).flatMap((t, i) => (t.speaker === sorted[i]!.speaker ? [] : [(sorted[i]!.end + t.start) / 2]));
}

/** For each true change of speaker, the distance (seconds) to the nearest found change (Infinity when none was found). */
export function boundaryErrors(truth: LabelledTurn[], found: LabelledTurn[]): number[] {
  const foundChanges = changes(found);
  return changes(truth).map((c) => Math.min(...foundChanges.map((f) => Math.abs(f - c))));
}

export const speakerCount = (turns: LabelledTurn[]) => new Set(turns.map((t) => t.speaker)).size;

/** One recording's scores. */
export type DiarizationScore = { der: number; trueSpeakers: number; foundSpeakers: number; changes: number; changesFound: number };

export function scoreDiarization(truth: LabelledTurn[], found: LabelledTurn[]): DiarizationScore {
  const errors = boundaryErrors(truth, found);
  return {
    der: diarizationErrorRate(truth, found),
    trueSpeakers: speakerCount(truth),
    foundSpeakers: speakerCount(found),
    changes: errors.length,
    changesFound: errors.filter((e) => e <= CHANGE_TOLERANCE).length,
  };
}
