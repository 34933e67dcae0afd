/**
 * Real synthetic speech for tests and benches: espeak-ng speaks the text, ffmpeg resamples
 * it to the 16 kHz mono float PCM the pipeline decodes to. Silero hears it as speech, as it
 * would a person (the "voiced" tones of signals.ts only stand in for a voice).
 * Needs espeak-ng and ffmpeg on the PATH (apt-get install espeak-ng ffmpeg).
 */
export const VOICES = ["en-us", "en-us+f3"];

export function spoken(text: string, voice = VOICES[0]!): Float32Array {
  const speech = Bun.spawnSync(["espeak-ng", "-v", voice, "-s", "160", "--stdout", text], { stdout: "pipe", stderr: "pipe" });
  if (speech.exitCode !== 0) throw new Error(`espeak-ng failed: ${speech.stderr.toString()}`);
  const pcm = Bun.spawnSync(["ffmpeg", "-loglevel", "error", "-i", "pipe:0", "-ar", "16000", "-ac", "1", "-f", "f32le", "pipe:1"], {
    stdin: speech.stdout,
    stdout: "pipe",
    stderr: "pipe",
  });
  if (pcm.exitCode !== 0) throw new Error(`ffmpeg failed: ${pcm.stderr.toString()}`);
  const bytes = pcm.stdout;
  return new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + (bytes.byteLength & ~3)));
}
