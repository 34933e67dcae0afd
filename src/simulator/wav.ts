/**
 * A short 16 kHz mono PCM16 WAV of syllable-like tone bursts: enough to pass upload
 * verification and audio probing, generated so the simulator carries no fixtures.
 */
export function generateWav(seconds: number, seed = 1): Uint8Array {
  const rate = 16_000;
  const samples = Math.round(seconds * rate);
  const buf = Buffer.alloc(44 + samples * 2);
  buf.write("RIFF", 0);
  buf.writeUInt32LE(36 + samples * 2, 4);
  buf.write("WAVE", 8);
  buf.write("fmt ", 12);
  buf.writeUInt32LE(16, 16);
  buf.writeUInt16LE(1, 20); // PCM
  buf.writeUInt16LE(1, 22); // mono
  buf.writeUInt32LE(rate, 24);
  buf.writeUInt32LE(rate * 2, 28);
  buf.writeUInt16LE(2, 32);
  buf.writeUInt16LE(16, 34);
  buf.write("data", 36);
  buf.writeUInt32LE(samples * 2, 40);
  const pitch = 110 + (seed % 7) * 15;
  for (let i = 0; i < samples; i++) {
    const t = i / rate;
    const envelope = Math.max(0, Math.sin(2 * Math.PI * 3 * t)) ** 2; // ~3 syllables a second
    const v = envelope * (0.5 * Math.sin(2 * Math.PI * pitch * t) + 0.25 * Math.sin(2 * Math.PI * pitch * 2.5 * t));
    buf.writeInt16LE(Math.round(v * 12_000), 44 + i * 2);
  }
  return buf;
}
