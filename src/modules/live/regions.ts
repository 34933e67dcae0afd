import { NEGATIVE, type SpeechAnalysis, type SpeechRegion } from "../../engines/vad";
import { joinedPlan, paddedRegions, type SpeechPlan } from "../transcriptions/speech-plan";

/**
 * At the end of what arrived, a region is over once this much quiet follows it (decision 210).
 * Silero's hysteresis (src/engines/vad.ts) ends a region only after 8 quiet frames of 96 ms,
 * which at the edge of a chunk meant waiting for the next chunk; the VAD already places the
 * end of a region still open at the edge where its quiet frames begin. 0.3 s is more than
 * three whole frames: as much evidence that speech stopped as the VAD asks to believe it began
 * (MIN_SPEECH_FRAMES), and never the last, zero-padded frame alone. Speech going on after such
 * a pause is a new region.
 */
export const CLOSING_QUIET_SECONDS = 0.3;
/**
 * Speech beginning this close to the end of what arrived may not show as a region yet (the VAD
 * needs three frames above its threshold to open one), so the quiet there is not committed.
 */
export const UNSURE_TAIL_SECONDS = 0.8;
/**
 * Whisper encodes a 30 s window whatever the length of what it is given (decision 193):
 * closed regions are joined into batches of at most this much audio, one transcriber call each.
 */
export const BATCH_SECONDS = 30;
/** Context on each side of a region, as the whole-file pipeline gives whisper (paddedRegions). */
export const PAD_SECONDS = 0.2;
/**
 * Speech that never pauses is cut at this length, so the transcript cannot lag without bound;
 * with its padding it is one batch.
 */
export const MAX_REGION_SECONDS = BATCH_SECONDS - 2 * PAD_SECONDS;

/** Whether a region is over: followed by CLOSING_QUIET_SECONDS of the window (the VAD closed it, or its speech stopped at the edge). */
const isClosed = (r: SpeechRegion, windowSeconds: number) => r.end <= windowSeconds - CLOSING_QUIET_SECONDS;

/** The regions followed by enough quiet to be over, and an unclosed one once it is too long (cut there). */
export function closedRegions(regions: SpeechRegion[], windowSeconds: number): SpeechRegion[] {
  return regions.flatMap((r) => {
    if (isClosed(r, windowSeconds)) return [r];
    if (r.end - r.start >= MAX_REGION_SECONDS) return [{ start: r.start, end: r.start + MAX_REGION_SECONDS }];
    return [];
  });
}

/**
 * The window's regions with the one still open at its end cut at its last pause of at least
 * CLOSING_QUIET_SECONDS of quiet frames (decision 211). The VAD bridges pauses under 0.8 s, so a
 * turn of several sentences is one region; when it runs over the end of what arrived, its speech
 * before such a pause is over and is closed now, instead of waiting a whole chunk for the turn to
 * end. The closed part ends where the pause begins and the rest begins where it ends, as the VAD
 * places a region's edges: their paddings meet inside the pause, and the rest is transcribed by a
 * later pass from the committed point, once (never twice).
 */
export function cutAtLastPause(analysis: SpeechAnalysis, windowSeconds: number): SpeechRegion[] {
  const { regions, frameSeconds } = analysis;
  const open = regions.at(-1);
  if (!open || isClosed(open, windowSeconds)) return regions;
  const pause = pausesIn(analysis, Math.floor(open.start / frameSeconds), Math.ceil(open.end / frameSeconds)).at(-1);
  if (!pause) return regions;
  return [...regions.slice(0, -1), { start: open.start, end: pause.start }, { start: pause.end, end: open.end }];
}

/**
 * The edge cut is made only when the next chunk is expected later than this (decision 234): the
 * issue's 5 s of lag, less what a pass takes on 2 cores (about 2.5 s). Sooner, waiting for the turn
 * to end costs less than that, and the cut would hand whisper pieces of turns a chunk long.
 */
export const EDGE_WAIT_SECONDS = 2.5;
/**
 * A turn still running on at the end of what arrived, with no pause to close it at (decision 211),
 * is cut at the edge once this much of it has arrived (decision 234). Less, and its first words end
 * in the next chunk anyway: waiting for it costs no lag, and cutting it would split a word or two off.
 */
export const EDGE_CUT_MIN_SECONDS = 1;
/** How far back from the end of what arrived the edge cut looks for the quietest frame: a word gap, most often. */
export const EDGE_CUT_SPAN_SECONDS = 3;
/**
 * Speech the edge cut leaves to the next pass: enough for that pass's VAD to open a region on it
 * (MIN_SPEECH_FRAMES, src/engines/vad.ts, with room), or its words would be heard by no pass.
 */
export const EDGE_REST_SECONDS = 0.5;

/**
 * What a pass transcribes: the closed regions, and the window's end as far as their padding may
 * reach. Where the next chunk is expected in more than EDGE_WAIT_SECONDS (`expectedWait`) and the
 * turn still open at the end of what arrived has at least EDGE_CUT_MIN_SECONDS of speech, it is
 * cut at its quietest frame in the last EDGE_CUT_SPAN_SECONDS: a word gap, or the quiet after it
 * (under CLOSING_QUIET_SECONDS) where speech stopped at the edge; a cut in the speech leaves the
 * next pass EDGE_REST_SECONDS of it. The speech before the cut is closed now, so no segment of a
 * turn running over a chunk's edge waits a whole chunk (decision 234). The cut is the end of the
 * padded window, so no audio after it is transcribed now, and the next pass starts at it: each
 * side once.
 */
export function closedSpeech(
  analysis: SpeechAnalysis,
  regions: SpeechRegion[],
  windowSeconds: number,
  expectedWait: number,
): { closed: SpeechRegion[]; until: number } {
  const closed = closedRegions(regions, windowSeconds);
  const open = regions.at(-1);
  if (expectedWait <= EDGE_WAIT_SECONDS || !open || isClosed(open, windowSeconds) || closed.at(-1)?.start === open.start)
    return { closed, until: windowSeconds };
  const { probabilities, frameSeconds } = analysis;
  const from = Math.ceil(Math.max(open.start + EDGE_CUT_MIN_SECONDS, windowSeconds - EDGE_CUT_SPAN_SECONDS) / frameSeconds);
  // Whole frames only (the last is zero-padded); in the speech, leaving the next pass enough of
  // it, or after it, in the quiet the VAD ends the region at.
  const to = Math.min(probabilities.length, Math.floor(windowSeconds / frameSeconds));
  const allowed = (f: number) => (f + 1) * frameSeconds <= open.end - EDGE_REST_SECONDS || f * frameSeconds >= open.end - 1e-9;
  let quietest = -1;
  for (let f = from; f < to; f++) if (allowed(f) && (quietest < 0 || probabilities[f]! <= probabilities[quietest]!)) quietest = f;
  if (quietest < 0) return { closed, until: windowSeconds };
  const cut = (quietest + 0.5) * frameSeconds;
  return { closed: [...closed, { start: open.start, end: Math.min(cut, open.end) }], until: cut };
}

/**
 * The pauses among frames `from`..`to` (exclusive), in seconds: runs of whole frames below the
 * VAD's quiet threshold lasting at least CLOSING_QUIET_SECONDS (4 of 96 ms), followed by a louder
 * frame. Quiet that runs to `to` is no pause: speech after it has not been heard.
 */
export function pausesIn({ probabilities, frameSeconds }: Omit<SpeechAnalysis, "regions">, from = 0, to = probabilities.length): SpeechRegion[] {
  const quietFrames = Math.ceil(CLOSING_QUIET_SECONDS / frameSeconds - 1e-9);
  const pauses: SpeechRegion[] = [];
  let quietFrom = -1;
  for (let f = from; f < Math.min(to, probabilities.length); f++) {
    if (probabilities[f]! < NEGATIVE) {
      if (quietFrom < 0) quietFrom = f;
      continue;
    }
    if (quietFrom >= 0 && f - quietFrom >= quietFrames) pauses.push({ start: quietFrom * frameSeconds, end: f * frameSeconds });
    quietFrom = -1;
  }
  return pauses;
}

/**
 * Up to where the window holds no speech that is still to be transcribed: the padded start of
 * the region still open, else the end less what a region starting there may not show yet.
 */
export function quietUntil(regions: SpeechRegion[], windowSeconds: number): number {
  // A region cut at MAX_REGION_SECONDS is still open: its rest is transcribed once it closes.
  const open = regions.find((r) => !isClosed(r, windowSeconds));
  return Math.max(0, open ? open.start - PAD_SECONDS : windowSeconds - UNSURE_TAIL_SECONDS - PAD_SECONDS);
}

/** What one transcriber call sends: its closed regions (for their speakers) and the plan joining them, padded. */
export type Batch = { regions: SpeechRegion[]; plan: SpeechPlan; end: number };

/**
 * The closed regions (in order) padded and joined end to end, in as few batches of at most
 * BATCH_SECONDS as keep their order; a region is never split across two.
 */
export function batchesOf(closed: SpeechRegion[], windowSeconds: number): Batch[] {
  const batches: Batch[] = [];
  let regions: SpeechRegion[] = [];
  const close = () => {
    const padded = paddedRegions(regions, windowSeconds);
    if (padded.length > 0) batches.push({ regions, plan: joinedPlan(padded, windowSeconds), end: padded.at(-1)!.end });
    regions = [];
  };
  for (const r of closed) {
    const joined = paddedRegions([...regions, r], windowSeconds).reduce((sum, p) => sum + (p.end - p.start), 0);
    if (regions.length > 0 && joined > BATCH_SECONDS) close();
    regions.push(r);
  }
  close();
  return batches;
}

/** The index of the region a segment (`start`..`end`, times of the window) overlaps most; the nearest when none. */
export function regionOf(regions: SpeechRegion[], start: number, end: number): number {
  let best = 0;
  let score = Number.NEGATIVE_INFINITY;
  for (const [i, r] of regions.entries()) {
    // Overlap when positive, minus the distance between them when not.
    const s = Math.min(end, r.end) - Math.max(start, r.start);
    if (s > score) [best, score] = [i, s];
  }
  return best;
}
