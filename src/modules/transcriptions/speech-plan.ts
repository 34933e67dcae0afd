import { samplesOfSpans } from "../../engines/pcm-spans";
import type { SpeechRegion } from "../../engines/vad";

/** Speech regions are widened by this much so a word's onset or tail is not clipped. */
const PAD_SECONDS = 0.2;
/**
 * Above this share of speech the whole recording is decoded as it is: what joining the
 * speech would save is within measurement noise, and whisper keeps every pause it would
 * have heard (decision 100, measured with bench/pipeline.ts).
 */
export const WHOLE_FILE_SPEECH_FRACTION = 0.85;

/** A stretch of the audio sent to the transcriber: `start`..`end` of the original, placed at `at` in what is sent. */
export type Span = { start: number; end: number; at: number };

/**
 * What the transcriber is given: the whole recording, or only its speech, the padded VAD
 * regions joined end to end (whisper's cost is per 30 s window it encodes, silence
 * included, so a conversation with a third of silence costs a third less).
 */
export type SpeechPlan = { mode: "whole" | "speech"; spans: Span[]; speechFraction: number; seconds: number };

/** Padded regions, merged where they touch, in order. */
export function paddedRegions(regions: SpeechRegion[], durationSeconds: number): SpeechRegion[] {
  const merged: SpeechRegion[] = [];
  for (const r of [...regions].sort((a, b) => a.start - b.start)) {
    const start = Math.max(0, r.start - PAD_SECONDS);
    const end = Math.min(durationSeconds, r.end + PAD_SECONDS);
    if (end <= start) continue;
    const last = merged.at(-1);
    if (last && start <= last.end) last.end = Math.max(last.end, end);
    else merged.push({ start, end });
  }
  return merged;
}

/** The plan for a recording whose VAD found `regions`; no spans when it found no speech. */
export function planSpeech(regions: SpeechRegion[], durationSeconds: number, wholeFileFraction = WHOLE_FILE_SPEECH_FRACTION): SpeechPlan {
  const padded = paddedRegions(regions, durationSeconds);
  const speech = padded.reduce((sum, r) => sum + (r.end - r.start), 0);
  const speechFraction = durationSeconds > 0 ? speech / durationSeconds : 0;
  if (padded.length === 0) return { mode: "speech", spans: [], speechFraction, seconds: 0 };
  if (speechFraction > wholeFileFraction)
    return { mode: "whole", spans: [{ start: 0, end: durationSeconds, at: 0 }], speechFraction, seconds: durationSeconds };
  return joinedPlan(padded, durationSeconds);
}

/**
 * The plan that sends `padded` (regions as paddedRegions gives them: in order, apart) end to
 * end, whatever their share of the `durationSeconds` of audio they are in.
 */
export function joinedPlan(padded: SpeechRegion[], durationSeconds: number): SpeechPlan {
  let at = 0;
  const spans = padded.map((r) => {
    const span = { start: r.start, end: r.end, at };
    at += r.end - r.start;
    return span;
  });
  return { mode: "speech", spans, speechFraction: durationSeconds > 0 ? at / durationSeconds : 0, seconds: at };
}

/** The audio the plan sends: the spans' samples end to end (the recording itself when whole). */
export function planAudio(plan: SpeechPlan, pcm: Float32Array, sampleRate: number): Float32Array {
  return plan.mode === "whole" ? pcm : samplesOfSpans(pcm, plan.spans, sampleRate);
}

/**
 * A time in the audio sent, back in the original recording. A segment's start maps into the
 * span it begins in and its end into the span it ends in, so a joint (where two spans meet)
 * is the end of the earlier span for an end and the start of the later one for a start.
 */
export function toOriginalTime(plan: SpeechPlan, t: number, edge: "start" | "end"): number {
  const spans = plan.spans;
  let i = spans.findIndex((s) => (edge === "start" ? t < s.at + (s.end - s.start) : t <= s.at + (s.end - s.start)));
  if (i < 0) i = spans.length - 1;
  const s = spans[i]!;
  return Math.min(s.end, s.start + Math.max(0, t - s.at));
}
