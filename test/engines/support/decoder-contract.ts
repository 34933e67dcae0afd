import { expect, test } from "bun:test";
import { join } from "node:path";
import type { AudioDecoder } from "../../../src/engines/audio";

const FIXTURES = join(import.meta.dir, "..", "..", "fixtures");

/** What every AudioDecoder does with the formats devices send: about 3 s of 16 kHz mono float PCM, the tone kept. */
export function decodesEveryFixture(decoder: AudioDecoder): void {
  test.each(["tone-3s.wav", "tone-3s.mp3", "tone-3s.m4a", "tone-3s.flac", "tone-3s.opus"])("decodes %s to about 3 s of 16 kHz mono float PCM", async (file) => {
    const pcm = await decoder.decodePcm16k(join(FIXTURES, file));
    expect(pcm.length).toBeGreaterThan(47_000);
    expect(pcm.length).toBeLessThan(50_000);
    const peak = pcm.reduce((m, v) => Math.max(m, Math.abs(v)), 0);
    // The fixtures are tones of amplitude up to 0.5: real signal, within [-1, 1].
    expect(peak).toBeGreaterThan(0.1);
    expect(peak).toBeLessThanOrEqual(1);
  });
}
