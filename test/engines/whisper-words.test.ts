import { describe, expect, test } from "bun:test";
import { ensureTestModels } from "../../scripts/test-models/cache";
import { nativeWhisperStatus } from "../../src/engines/whisper-native-build";
import { WhisperTranscriber } from "../../src/engines/whisper-transcriber";
import { voicedBurst } from "./signals";

const models = ensureTestModels();
// CI builds the addon (whisper-builds.test.ts checks it); a machine that could not build it has no words to check.
const native = nativeWhisperStatus();

describe("whisper's token timestamps as words (Parley's addon)", () => {
  test.if(native.usable)(
    "every segment has words: in order, inside the audio, scored 0-1, spelling its text",
    async () => {
      const t = new WhisperTranscriber({ model: "tiny", path: models.whisper, gpu: "off" });
      const seconds = 12;
      const result = await t.transcribe(voicedBurst(seconds, 0.5, seconds - 0.5), { language: "en" });
      expect(result.segments.length).toBeGreaterThan(0);
      for (const s of result.segments) {
        // Sub-word tokens joined into words, special and timestamp tokens left out: the words
        // spell the segment's text (a token per word would read "w p6 h" for "wp6h").
        expect(s.words?.length).toBeGreaterThan(0);
        expect(s.words!.map((w) => w.text).join(" ")).toBe(s.text.trim().split(/\s+/).join(" "));
        let previous = 0;
        for (const w of s.words!) {
          expect(w.text).toBe(w.text.trim());
          expect(w.start).toBeGreaterThanOrEqual(previous);
          expect(w.end).toBeGreaterThanOrEqual(w.start);
          expect(w.end).toBeLessThanOrEqual(seconds);
          expect(w.confidence).toBeGreaterThanOrEqual(0);
          expect(w.confidence).toBeLessThanOrEqual(1);
          previous = w.start;
        }
      }
    },
    60_000,
  );
});
