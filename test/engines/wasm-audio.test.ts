import { describe, expect, test } from "bun:test";
import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { chooseAudioDecoder } from "../../src/engines";
import { UndecodableAudioError } from "../../src/engines/audio";
import { FfmpegAudioDecoder, findFfmpeg, findSystemFfmpeg } from "../../src/engines/ffmpeg-audio";
import { WasmAudioDecoder } from "../../src/engines/wasm-audio";
import { makeTempDir } from "../helpers";
import { decodesEveryFixture } from "./support/decoder-contract";

const FIXTURES = join(import.meta.dir, "..", "fixtures");
const decoder = new WasmAudioDecoder();

/** A 16-bit PCM WAV of a sine, `channels` alike. */
function sineWav(path: string, rate: number, channels: number, seconds: number, hz = 440): void {
  const frames = Math.round(rate * seconds);
  const data = Buffer.alloc(frames * channels * 2);
  for (let i = 0; i < frames; i++)
    for (let c = 0; c < channels; c++) data.writeInt16LE(Math.round(Math.sin((2 * Math.PI * hz * i) / rate) * 16000), (i * channels + c) * 2);
  const header = Buffer.alloc(44);
  header.write("RIFF", 0);
  header.writeUInt32LE(36 + data.length, 4);
  header.write("WAVEfmt ", 8);
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(channels, 22);
  header.writeUInt32LE(rate, 24);
  header.writeUInt32LE(rate * channels * 2, 28);
  header.writeUInt16LE(channels * 2, 32);
  header.writeUInt16LE(16, 34);
  header.write("data", 36);
  header.writeUInt32LE(data.length, 40);
  writeFileSync(path, Buffer.concat([header, data]));
}

describe("built-in WebAssembly audio decoder (decision 091)", () => {
  test.each([
    ["tone-3s.wav", "wav", 16000],
    ["tone-3s.mp3", "mp3", 16000],
    ["tone-3s.m4a", "m4a", 16000],
    ["tone-3s.flac", "flac", 16000],
    ["tone-3s.opus", "ogg", 48000],
  ])("probes %s as %s like ffmpeg does", async (file, format, rate) => {
    const p = await decoder.probe(join(FIXTURES, file));
    const ffmpeg = await new FfmpegAudioDecoder(findFfmpeg()).probe(join(FIXTURES, file));
    // The same container name as the ffmpeg path reports, so the API does not depend on the decoder.
    expect(p).toMatchObject({ format, sampleRate: rate, channels: 1 });
    expect(p.format).toBe(ffmpeg.format);
    expect(p.durationSeconds).toBeGreaterThan(2.9);
    expect(p.durationSeconds).toBeLessThan(3.2);
  });

  decodesEveryFixture(decoder);

  test("stereo 44.1 kHz comes out 16 kHz mono with the tone kept", async () => {
    const path = join(makeTempDir(), "stereo.wav");
    sineWav(path, 44_100, 2, 2);
    expect(await decoder.probe(path)).toMatchObject({ format: "wav", sampleRate: 44_100, channels: 2, durationSeconds: 2 });
    const pcm = await decoder.decodePcm16k(path);
    expect(Math.abs(pcm.length - 32_000)).toBeLessThanOrEqual(2);
    // 440 Hz crosses zero twice a cycle: 1760 times in 2 s.
    let crossings = 0;
    for (let i = 1; i < pcm.length; i++) if (pcm[i - 1]! < 0 !== pcm[i]! < 0) crossings++;
    expect(Math.abs(crossings - 1760)).toBeLessThan(10);
  });

  test("8 kHz is stretched to 16 kHz", async () => {
    const path = join(makeTempDir(), "narrow.wav");
    sineWav(path, 8_000, 1, 1);
    expect(Math.abs((await decoder.decodePcm16k(path)).length - 16_000)).toBeLessThanOrEqual(2);
  });

  test("a file that is not audio, or a truncated one, is UndecodableAudioError", async () => {
    await expect(decoder.probe(join(FIXTURES, "not-audio.txt"))).rejects.toBeInstanceOf(UndecodableAudioError);
    await expect(decoder.decodePcm16k(join(FIXTURES, "not-audio.txt"))).rejects.toBeInstanceOf(UndecodableAudioError);
    const empty = join(makeTempDir(), "empty.wav");
    writeFileSync(empty, "");
    await expect(decoder.probe(empty)).rejects.toBeInstanceOf(UndecodableAudioError);
  });

  test("an aborted decode rejects with the abort reason", async () => {
    const controller = new AbortController();
    controller.abort(new Error("stop"));
    await expect(decoder.decodePcm16k(join(FIXTURES, "tone-3s.opus"), controller.signal)).rejects.toThrow("stop");
  });
});

describe("which decoder runs", () => {
  test("PARLEY_FFMPEG_PATH wins; no ffmpeg on the PATH means the built-in decoders", () => {
    expect(chooseAudioDecoder("/opt/ffmpeg/bin/ffmpeg")).toBeInstanceOf(FfmpegAudioDecoder);
    const empty = makeTempDir();
    expect(findSystemFfmpeg(empty)).toBeNull();
    expect(chooseAudioDecoder(undefined, empty)).toBeInstanceOf(WasmAudioDecoder);
  });

  test("an ffmpeg older than 5.1 is not trusted with uploads; 5.1 and newer are", () => {
    const dir = makeTempDir();
    const fake = (version: string) => {
      writeFileSync(join(dir, "ffmpeg"), `#!/bin/sh\necho "ffmpeg version ${version} Copyright (c) 2000-2018 the FFmpeg developers"\n`);
      chmodSync(join(dir, "ffmpeg"), 0o755);
    };
    fake("4.1");
    expect(findSystemFfmpeg(dir)).toBeNull();
    fake("5.1.7-0+deb12u1");
    expect(findSystemFfmpeg(dir)).toBe(join(dir, "ffmpeg"));
    fake("N-118000-gabcdef");
    expect(findSystemFfmpeg(dir)).toBe(join(dir, "ffmpeg"));
  });
});
