// Transcribes two seconds and returns from the module without process.exit: the test
// checks that nothing Whisper leaves behind keeps the process alive.
import { WhisperTranscriber } from "../../../src/engines/whisper-transcriber";
import { voicedBurst } from "../signals";

const t = new WhisperTranscriber({ model: "tiny", path: process.argv[2]!, gpu: "off" });
const result = await t.transcribe(voicedBurst(2, 0, 2), { language: "en" });
console.log(`segments ${result.segments.length}`);
