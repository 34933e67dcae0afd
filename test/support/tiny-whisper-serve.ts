// `parley serve` for the kill -9 tests: the real server (src/main.ts's serve, on the config the
// environment gives) with whisper on PARLEY_WHISPER_MODEL, a tiny random-weight model, minus
// the temperature fallback: random weights never clear whisper's log-probability threshold,
// and six decodes per call would make each transcription take minutes on a busy 2-core box.
import { loadConfig } from "../../src/config";
import { createEngines } from "../../src/engines";
import { WhisperTranscriber } from "../../src/engines/whisper-transcriber";
import { createLogger } from "../../src/log";
import { serve } from "../../src/main";

const config = loadConfig(process.env);
const log = createLogger(config.logLevel);
const transcriber = new WhisperTranscriber({ model: "tiny", path: config.models.whisper, gpu: "off", threads: 1, decoding: { temperatureInc: 0 } });
await serve(config, { log, engines: { ...createEngines(config, log), transcriber } });
