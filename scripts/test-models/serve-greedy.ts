// `parley serve` for random-weight stand-ins (the kill -9 tests, bench/live.ts): the real
// server (src/main.ts's serve, on the config the environment gives) with whisper on
// PARLEY_WHISPER_MODEL minus the temperature fallback. Random weights never clear whisper's
// log-probability threshold, so every call would decode six times: minutes per transcription
// on a busy 2-core box, and a bench that measures the stand-in's failure, not the pipeline.
// Usage: bun scripts/test-models/serve-greedy.ts [--threads N]   (default: the engine's own choice)
import { parseArgs } from "node:util";
import { loadConfig } from "../../src/config";
import { createEngines } from "../../src/engines";
import { WhisperTranscriber } from "../../src/engines/whisper-transcriber";
import { createLogger } from "../../src/log";
import { serve } from "../../src/main";

const { values } = parseArgs({ options: { threads: { type: "string" } } });
const config = loadConfig(process.env);
const log = createLogger(config.logLevel);
const transcriber = new WhisperTranscriber({
  model: config.models.whisper,
  path: config.models.whisper,
  gpu: "off",
  threads: values.threads === undefined ? undefined : Number(values.threads),
  decoding: { temperatureInc: 0 },
});
await serve(config, { log, engines: { ...createEngines(config, log), transcriber } });
