/** A stretch of audio in seconds. */
export type Span = { start: number; end: number };

/** The samples of the spans, end to end (each clamped to the audio). */
export function samplesOfSpans(pcm: Float32Array, spans: readonly Span[], sampleRate: number): Float32Array {
  return concatSamples(spans.map((s) => pcm.subarray(Math.max(0, Math.floor(s.start * sampleRate)), Math.min(pcm.length, Math.ceil(s.end * sampleRate)))));
}

/** The parts' samples end to end, in one array. */
export function concatSamples(parts: readonly Float32Array[]): Float32Array {
  const out = new Float32Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
