/** A stretch of audio in seconds. */
export type Span = { start: number; end: number };

/** The samples of the spans, end to end (each clamped to the audio). */
export function samplesOfSpans(pcm: Float32Array, spans: readonly Span[], sampleRate: number): Float32Array {
  const parts = spans.map((s) => pcm.subarray(Math.max(0, Math.floor(s.start * sampleRate)), Math.min(pcm.length, Math.ceil(s.end * sampleRate))));
  const out = new Float32Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
