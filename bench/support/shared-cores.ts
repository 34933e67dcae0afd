import { LlamaLlm } from "../../src/engines/llama-llm";
import type { CompletionRequest } from "../../src/engines/llm";
import { Turns } from "../../src/engines/turns";
import type { WhisperDecoding } from "../../src/engines/whisper-runner";
import { WhisperTranscriber } from "../../src/engines/whisper-transcriber";
import { TEMPLATES } from "../../src/modules/summaries/templates";

/**
 * A transcription and a summary started at the same moment, as when one recording finishes
 * uploading while another's summary starts (two model job slots, PARLEY_JOB_CONCURRENCY=2).
 * Before decision 110 each engine took turns on its own, so both ran at once with every core
 * each; now they share the cores' turns and one runs after the other. Both setups have their
 * models loaded before timing; runs alternate between them, and each figure is a median.
 */

const LINE = "[00:01] SPEAKER_1: the patient reports the knee pain improved after the second week of physiotherapy";
const SUMMARY: CompletionRequest = {
  messages: [
    { role: "system", content: "Summarise the conversation as JSON." },
    { role: "user", content: Array.from({ length: 24 }, () => LINE).join("\n") },
  ],
  jsonSchema: TEMPLATES.general.schema,
  maxTokens: 64,
  temperature: 0,
};

type Times = { transcription: number; summary: number; both: number };
export type SharedCores = { alone: Times; ownTurns: Times; sharedTurns: Times };

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const medianTimes = (runs: Times[]): Times => ({
  transcription: median(runs.map((r) => r.transcription)),
  summary: median(runs.map((r) => r.summary)),
  both: median(runs.map((r) => r.both)),
});

function engines(whisperPath: string, ggufPath: string, threads: number, decoding: WhisperDecoding, cores?: Turns) {
  return {
    whisper: new WhisperTranscriber({ model: "bench", path: whisperPath, gpu: "off", threads, decoding, cores }),
    llm: new LlamaLlm({ model: "bench", path: ggufPath, gpu: "off", cores }),
  };
}
type Pair = ReturnType<typeof engines>;

/** Times from the common start to each one's end; `both` is when the last ended. */
async function together(pair: Pair, pcm: Float32Array): Promise<Times> {
  const t0 = performance.now();
  const since = () => performance.now() - t0;
  const [transcription, summary] = await Promise.all([pair.whisper.transcribe(pcm, { language: "en" }).then(since), pair.llm.complete(SUMMARY).then(since)]);
  return { transcription, summary, both: Math.max(transcription, summary) };
}

async function alone(pair: Pair, pcm: Float32Array): Promise<Times> {
  let t0 = performance.now();
  await pair.whisper.transcribe(pcm, { language: "en" });
  const transcription = performance.now() - t0;
  t0 = performance.now();
  await pair.llm.complete(SUMMARY);
  const summary = performance.now() - t0;
  return { transcription, summary, both: transcription + summary };
}

export async function sharedCores(
  whisperPath: string,
  ggufPath: string,
  pcm: Float32Array,
  options: { threads: number; decoding: WhisperDecoding; runs: number },
): Promise<SharedCores> {
  const own = engines(whisperPath, ggufPath, options.threads, options.decoding);
  const shared = engines(whisperPath, ggufPath, options.threads, options.decoding, new Turns());
  for (const pair of [own, shared]) await Promise.all([pair.whisper.load(), pair.llm.load()]);
  const runs = { alone: [] as Times[], ownTurns: [] as Times[], sharedTurns: [] as Times[] };
  for (let i = 0; i < options.runs; i++) {
    runs.alone.push(await alone(own, pcm));
    runs.ownTurns.push(await together(own, pcm));
    runs.sharedTurns.push(await together(shared, pcm));
  }
  for (const pair of [own, shared]) await (await pair.llm.load()).model.dispose();
  return { alone: medianTimes(runs.alone), ownTurns: medianTimes(runs.ownTurns), sharedTurns: medianTimes(runs.sharedTurns) };
}
