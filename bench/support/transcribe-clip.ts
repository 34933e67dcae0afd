// One process: loads the base.en-shaped stand-in in Parley's addon, warms it, then prints the
// seconds of each greedy transcription of a 20 s conversation clip as JSON (bench/openmp.ts).
import { ensureShapedWhisperModel } from "../../scripts/test-models/cache";
import { WhisperTranscriber } from "../../src/engines/whisper-transcriber";
import { conversationClip } from "./conversation";

const runs = Number(process.argv[2] ?? 2);
const pcm = conversationClip(20 / 60).pcm;
const path = ensureShapedWhisperModel("base.en", "f16", 100);
const whisper = new WhisperTranscriber({ model: "base.en", path, gpu: "off", threads: 2, decoding: { bestOf: 5, temperature: 0, temperatureInc: 0 } });
await whisper.transcribe(pcm.subarray(0, 16_000), { language: "en" });
const seconds: number[] = [];
for (let i = 0; i < runs; i++) {
  const t0 = performance.now();
  await whisper.transcribe(pcm, { language: "en" });
  seconds.push((performance.now() - t0) / 1000);
}
console.log(JSON.stringify(seconds));
process.exit(0);
