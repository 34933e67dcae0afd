import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SingleSpeakerDiarizer } from "../../src/engines/diarizer";
import { ScriptedLlm } from "../../src/engines/llm.test-double";
import { utteranceTranscriber } from "../modules/live-support";
import { concat, silence, voiced, wav } from "../modules/pipeline-fixtures";
import { createRecording, put, sha256 } from "../modules/recordings-support";
import { visit } from "./pages-support";
import { type Dashboard, hasChromium, onPage, startDashboard } from "./support";

/**
 * The recording page while the device streams: real ffmpeg and Silero VAD, the live tests'
 * transcriber (each voiced stretch is "utterance N"); the test drains the queue as chunks arrive.
 */
describe.skipIf(!hasChromium)("live transcript in the dashboard", () => {
  let d: Dashboard;
  beforeAll(async () => {
    d = await startDashboard({ engines: { transcriber: utteranceTranscriber(), llm: new ScriptedLlm(), diarizer: new SingleSpeakerDiarizer() } });
  });
  afterAll(() => d?.stop());

  test("the transcript grows on the recording page while chunks arrive, then shows the final one", async () => {
    const speech = wav(concat(voiced(2), silence(1.5), voiced(2), silence(1.5), voiced(2), silence(1.5)));
    const parts = [speech.slice(0, 100_000), speech.slice(100_000, 190_000), speech.slice(190_000)];
    const key = d.tenant!.test;
    const rec = await createRecording(d, key, { name: "Streaming visit" });
    await put(d, key, rec.id, parts[0]!, { chunk_index: 0 });
    await d.deps.queue.drain();
    await onPage(await d.newSignedInPage(), "live-transcript", async (page) => {
      await visit(page, `${d.base}/dashboard#/recordings/${rec.id}`, /Streaming visit/);
      const live = page.getByRole("list", { name: "Live transcript" });
      await live.getByText("utterance 1").waitFor();
      expect(await live.getByRole("listitem").count()).toBe(1);
      // Later chunks: the new segments appear on the open page, without a reload.
      for (const i of [1, 2]) await put(d, key, rec.id, parts[i]!, { chunk_index: i });
      await d.deps.queue.drain();
      await live.getByText("utterance 3").waitFor();
      expect(await live.getByRole("listitem").allTextContents()).toEqual([
        "0:00 SPEAKER_1 utterance 1",
        "0:03 SPEAKER_1 utterance 2",
        "0:07 SPEAKER_1 utterance 3",
      ]);
      // Completion: the stream ends with completed, and the page shows the final transcript in its place.
      await d.call("POST", `/v1/recordings/${rec.id}/upload-complete`, { key, body: { sha256: sha256(speech) } });
      await d.deps.queue.drain();
      await live.waitFor({ state: "detached" });
      await page.getByRole("heading", { name: /Transcript\s+completed/ }).waitFor();
    });
  });
});
