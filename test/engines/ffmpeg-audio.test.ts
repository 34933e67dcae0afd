import { describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { DecoderInterruptedError, DecoderUnavailableError, UndecodableAudioError } from "../../src/engines/audio";
import { FfmpegAudioDecoder, findFfmpeg, parseProbe } from "../../src/engines/ffmpeg-audio";
import { makeTempDir } from "../helpers";
import { decodesEveryFixture } from "./support/decoder-contract";

const FIXTURES = join(import.meta.dir, "..", "fixtures");
const decoder = new FfmpegAudioDecoder(findFfmpeg());

describe("ffmpeg audio decoder", () => {
  test.each([
    ["tone-3s.wav", "wav", "pcm_s16le", 16000],
    ["tone-3s.mp3", "mp3", "mp3", 16000],
    ["tone-3s.m4a", "m4a", "aac", 16000],
    ["tone-3s.flac", "flac", "flac", 16000],
    ["tone-3s.opus", "ogg", "opus", 48000],
  ])("probes %s as %s/%s", async (file, format, codec, rate) => {
    const p = await decoder.probe(join(FIXTURES, file));
    expect(p).toMatchObject({ format, codec, sampleRate: rate, channels: 1 });
    expect(p.durationSeconds).toBeGreaterThan(2.9);
    expect(p.durationSeconds).toBeLessThan(3.2);
  });

  decodesEveryFixture(decoder);

  test("a file that is not audio is UndecodableAudioError for probe and decode", async () => {
    const path = join(FIXTURES, "not-audio.txt");
    await expect(decoder.probe(path)).rejects.toBeInstanceOf(UndecodableAudioError);
    await expect(decoder.decodePcm16k(path)).rejects.toBeInstanceOf(UndecodableAudioError);
  });

  test("a missing file is an error, not a hang", async () => {
    await expect(decoder.probe(join(FIXTURES, "missing.wav"))).rejects.toThrow();
  });

  test("an aborted decode rejects", async () => {
    const controller = new AbortController();
    controller.abort(new Error("stop"));
    await expect(decoder.decodePcm16k(join(FIXTURES, "tone-3s.wav"), controller.signal)).rejects.toThrow();
  });

  test("the configured binary wins; otherwise a real ffmpeg is found", () => {
    expect(findFfmpeg("/opt/ffmpeg/bin/ffmpeg")).toBe("/opt/ffmpeg/bin/ffmpeg");
    expect(findFfmpeg()).toMatch(/ffmpeg$/);
    expect(decoder.binary).toBe(findFfmpeg());
  });

  test("parseProbe reads ffmpeg's banner, with or without a duration", () => {
    const banner = `Input #0, mov,mp4,m4a,3gp,3g2,mj2, from 'x.m4a':\n  Duration: 01:02:03.50, start: 0.000000, bitrate: 18 kb/s\n    Stream #0:0(und): Audio: aac (LC) (mp4a / 0x6134706D), 44100 Hz, stereo, fltp, 128 kb/s (default)\n`;
    expect(parseProbe(banner)).toEqual({ format: "m4a", codec: "aac", sampleRate: 44100, channels: 2, durationSeconds: 3723.5 });
    const raw = `Input #0, matroska,webm, from 'pipe:':\n  Duration: N/A, start: 0.000000, bitrate: N/A\n    Stream #0:0: Audio: opus, 48000 Hz, mono, fltp (default)\n`;
    expect(parseProbe(raw)).toMatchObject({ format: "webm", codec: "opus", channels: 1, durationSeconds: null });
    expect(() => parseProbe("x.txt: Invalid data found when processing input")).toThrow(UndecodableAudioError);
  });

  /** An executable shell script standing in for ffmpeg. */
  function fakeFfmpeg(script: string): string {
    const path = join(makeTempDir(), "ffmpeg");
    writeFileSync(path, `#!/bin/sh\n${script}\n`, { mode: 0o700 });
    return path;
  }

  test("ffmpeg killed by a signal Parley did not send is DecoderInterruptedError, never UndecodableAudioError", async () => {
    const killed = new FfmpegAudioDecoder(fakeFfmpeg("kill -TERM $$"));
    const wav = join(FIXTURES, "tone-3s.wav");
    await expect(killed.probe(wav)).rejects.toBeInstanceOf(DecoderInterruptedError);
    await expect(killed.decodePcm16k(wav)).rejects.toBeInstanceOf(DecoderInterruptedError);
  });

  test("an ffmpeg that cannot be executed (missing, not executable) is DecoderUnavailableError naming the fix, never UndecodableAudioError", async () => {
    const notExecutable = join(makeTempDir(), "ffmpeg");
    writeFileSync(notExecutable, "not a program", { mode: 0o600 });
    const wav = join(FIXTURES, "tone-3s.wav");
    for (const binary of ["/nonexistent/ffmpeg", notExecutable]) {
      const broken = new FfmpegAudioDecoder(binary);
      await expect(broken.probe(wav)).rejects.toBeInstanceOf(DecoderUnavailableError);
      await expect(broken.decodePcm16k(wav)).rejects.toThrow(`${binary}`);
      await expect(broken.decodePcm16k(wav)).rejects.toThrow("PARLEY_FFMPEG_PATH");
    }
  });

  test("ffmpeg runs in a session of its own, out of reach of a signal to Parley's process group", async () => {
    const seen = join(makeTempDir(), "ids");
    const recorder = new FfmpegAudioDecoder(fakeFfmpeg(`ps -o pid=,sid= -p $$ > ${seen}; exec ${findFfmpeg()} "$@"`));
    expect((await recorder.decodePcm16k(join(FIXTURES, "tone-3s.wav"))).length).toBeGreaterThan(16_000);
    const [pid, sid] = readFileSync(seen, "utf8").trim().split(/\s+/);
    expect(sid).toBe(pid!);
  });
});
