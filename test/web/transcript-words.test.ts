import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { systemClock } from "../../src/clock";
import { ScriptedTranscriber } from "../../src/engines/transcriber.test-double";
import { seedRecording, voiced, wav } from "../modules/pipeline-fixtures";
import { type Dashboard, hasChromium, onPage, startDashboard } from "./support";

const WORDS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"];

/**
 * The recording page's player marks the word being said, on the real pipeline (ffmpeg, Silero
 * VAD) and a real browser playing the audio; the transcriber is scripted so the words and
 * their times are known: one segment, a word a second.
 */
describe.skipIf(!hasChromium)("the transcript player follows the words", () => {
  let d: Dashboard;
  let recordingId: string;

  beforeAll(async () => {
    const segments = (pcm: Float32Array) => {
      const seconds = pcm.length / 16_000;
      const words = WORDS.map((text, i) => ({ start: i, end: i + 0.8, text, confidence: 0.9 }));
      return [{ start: 0, end: seconds, text: ` ${WORDS.join(" ")}`, confidence: 0.9, words }];
    };
    d = await startDashboard({ clock: systemClock, engines: { transcriber: new ScriptedTranscriber({ segments }) } });
    const key = d.tenant!.test;
    recordingId = await seedRecording(d.deps, { projectId: d.tenant!.project.id, mode: "test" }, wav(voiced(WORDS.length)));
    await d.call("POST", "/v1/transcriptions", { key, body: { recording_id: recordingId, max_speakers: 1 } });
    await d.deps.queue.drain();
    const txn = (await d.call("GET", `/v1/transcriptions?recording_id=${recordingId}`, { key })).body.data[0];
    expect(txn.segments[0].words.map((w: { text: string }) => w.text)).toEqual(WORDS);
  }, 120_000);
  afterAll(() => d?.stop());

  test("clicking a word plays from it; as the audio plays the marked word moves on, one at a time", async () => {
    await onPage(await d.newSignedInPage(), "transcript-words", async (page) => {
      await page.goto(`${d.base}/dashboard#/recordings/${recordingId}`);
      const transcript = page.getByRole("list", { name: "Transcript segments" });
      await transcript.getByText("alpha", { exact: true }).waitFor();
      // Every word marked, in order, as it is marked (a poll could miss a word on a busy machine).
      await page.evaluate(() => {
        const seen: string[] = [];
        (window as unknown as { seen: string[] }).seen = seen;
        new MutationObserver((changes) => {
          for (const c of changes) {
            const el = c.target as Element;
            if (el.classList.contains("word") && el.classList.contains("current")) seen.push(el.textContent ?? "");
          }
        }).observe(document.body, { subtree: true, attributes: true, attributeFilter: ["class"] });
      });
      await transcript.getByText("charlie", { exact: true }).click();
      // The highlight moves on by itself as the playhead passes the next words' starts.
      await page.waitForFunction(() => (window as unknown as { seen: string[] }).seen.includes("foxtrot"));
      const seen = await page.evaluate(() => (window as unknown as { seen: string[] }).seen);
      // The click played from charlie (2 s), not from the segment's start; then each word in turn.
      expect(seen.slice(0, 4)).toEqual(["charlie", "delta", "echo", "foxtrot"]);
      // At a phone's width the segment's words wrap inside it (a segment is a button, and buttons do not wrap by default).
      await page.setViewportSize({ width: 390, height: 844 });
      const text = transcript.locator(".segment-text").first();
      expect(await text.evaluate((t) => t.scrollWidth <= t.clientWidth)).toBe(true);
      expect(await transcript.locator(".word.current").count()).toBe(1);
    });
  }, 60_000);
});
