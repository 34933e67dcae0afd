/**
 * Synthetic 16 kHz signals for engine tests. "Voiced" is a vibrato harmonic tone with a
 * syllable-rate envelope: Silero VAD scores it as speech, which pure tones and white
 * noise are not, so it stands in for a voice without shipping a recording.
 */
export const RATE = 16_000;

export function silence(seconds: number): Float32Array {
  return new Float32Array(Math.round(seconds * RATE));
}

/** `total` seconds of silence with a voiced burst from `from` to `to` seconds. */
export function voicedBurst(total: number, from: number, to: number): Float32Array {
  const pcm = silence(total);
  for (let i = Math.round(from * RATE); i < Math.round(to * RATE); i++) {
    const t = i / RATE;
    const pitch = 150 + 50 * Math.sin(2 * Math.PI * 4 * t);
    const envelope = 0.5 + 0.5 * Math.sin(2 * Math.PI * 3 * t);
    pcm[i] = 0.3 * Math.sin(2 * Math.PI * pitch * t) * envelope + 0.1 * Math.sin(2 * Math.PI * 300 * t) + 0.05 * Math.sin(2 * Math.PI * 450 * t);
  }
  return pcm;
}

/** A mono 16-bit WAV file of the samples, for code paths that start from a file. */
export function wavBytes(pcm: Float32Array): Uint8Array<ArrayBuffer> {
  const data = new Int16Array(pcm.length);
  for (let i = 0; i < pcm.length; i++) data[i] = Math.max(-32768, Math.min(32767, Math.round(pcm[i]! * 32767)));
  const header = new DataView(new ArrayBuffer(44));
  const text = (offset: number, s: string) => [...s].forEach((c, i) => header.setUint8(offset + i, c.charCodeAt(0)));
  text(0, "RIFF");
  header.setUint32(4, 36 + data.byteLength, true);
  text(8, "WAVEfmt ");
  header.setUint32(16, 16, true);
  header.setUint16(20, 1, true);
  header.setUint16(22, 1, true);
  header.setUint32(24, RATE, true);
  header.setUint32(28, RATE * 2, true);
  header.setUint16(32, 2, true);
  header.setUint16(34, 16, true);
  text(36, "data");
  header.setUint32(40, data.byteLength, true);
  const out = new Uint8Array(44 + data.byteLength);
  out.set(new Uint8Array(header.buffer));
  out.set(new Uint8Array(data.buffer), 44);
  return out;
}
