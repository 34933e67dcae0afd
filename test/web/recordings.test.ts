import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { ensureTestModels } from "../../scripts/test-models/cache";
import { systemClock } from "../../src/clock";
import { waitFor } from "../helpers";
import { openFromNav, untilReplaced, visit } from "./pages-support";
import { type Dashboard, hasChromium, onPage, startDashboard } from "./support";

const SAMPLE = join(import.meta.dir, "../../src/simulator/samples/team-standup.opus");

/**
 * Recordings in a real browser, on the real pipeline (ffmpeg, Silero VAD, whisper.cpp and
 * llama.cpp with tiny generated models: random words, so this asserts times and plumbing,
 * never wording). The test app has no job runner of its own: the test drains the queue.
 */
describe.skipIf(!hasChromium)("recordings in the dashboard", () => {
  let d: Dashboard;

  beforeAll(async () => {
    const models = ensureTestModels();
    d = await startDashboard({ clock: systemClock, env: { PARLEY_WHISPER_MODEL: models.whisper, PARLEY_LLM_MODEL: models.gguf } });
    // Summaries on demand only, so the test says which one it waits for.
    await d.call("PUT", "/v1/config/project", { key: d.tenant!.test, body: { auto_summarize: false } });
  });
  afterAll(() => d?.stop());

  const latestTranscription = async (recordingId: string) =>
    (await d.call("GET", `/v1/transcriptions?recording_id=${recordingId}`, { key: d.tenant!.test })).body.data[0];

  test("upload a recording, see its transcript, click a segment to seek the audio, generate a summary, delete it", async () => {
    await onPage(await d.newSignedInPage(), "recording-upload", async (page) => {
      await openFromNav(page, "Recordings");
      await page.getByText("Upload a recording").click();
      await page.getByLabel("Audio file", { exact: true }).setInputFiles(SAMPLE);
      await page.getByLabel("Name", { exact: true }).fill("Team standup");
      await page.getByRole("button", { name: "Upload", exact: true }).click();
      await page.waitForURL(/#\/recordings\/rec_/);
      const id = page.url().split("#/recordings/")[1]!;

      await waitFor("the upload to complete", async () => (await d.call("GET", `/v1/recordings/${id}`, { key: d.tenant!.test })).body.status !== "pending");
      await d.deps.queue.drain();
      const txn = await latestTranscription(id);
      expect(txn.status).toBe("completed");
      expect(txn.segments.length).toBeGreaterThan(1);

      const segments = page.getByRole("list", { name: "Transcript segments" }).getByRole("button");
      await segments.first().waitFor();
      expect(await segments.count()).toBe(txn.segments.length);
      const last = txn.segments[txn.segments.length - 1];
      await segments.last().click();
      const currentTime = await page.evaluate(() => document.querySelector("audio")!.currentTime);
      expect(currentTime).toBeGreaterThanOrEqual(last.start - 0.05);
      expect(currentTime).toBeLessThan(last.start + 1.5);
      expect(await segments.last().getAttribute("aria-current")).toBe("true");

      await page.getByRole("button", { name: "Generate general summary", exact: true }).click();
      await waitFor("the summary job", async () => (await d.call("GET", `/v1/summaries?transcription_id=${txn.id}`, { key: d.tenant!.test })).body.data[0]);
      await d.deps.queue.drain();
      await page.getByRole("article", { name: "General summary" }).getByText("completed").waitFor();
      await page.getByRole("button", { name: "Regenerate general summary", exact: true }).waitFor();

      await page.getByRole("button", { name: "Delete", exact: true }).click();
      await page.getByRole("dialog").getByRole("button", { name: "Delete", exact: true }).click();
      await page.waitForURL(/#\/recordings$/);
      expect((await d.call("GET", `/v1/recordings/${id}`, { key: d.tenant!.test })).status).toBe(404);
    });
  }, 120_000);

  test("filters by status and end user narrow the list", async () => {
    const key = d.tenant!.test;
    const eu = (await d.call("POST", "/v1/end-users", { key, body: { name: "Grace Hopper" } })).body;
    await d.call("POST", "/v1/recordings", { key, body: { name: "Grace pending", end_user_id: eu.id } });
    await d.call("POST", "/v1/recordings", { key, body: { name: "Nobody's pending" } });
    await onPage(await d.newSignedInPage({ phone: true }), "recordings-filters", async (page) => {
      await visit(page, `${d.base}/dashboard#/recordings`, "Recordings");
      // The unfiltered list shows both: look in the list the filters brought.
      await untilReplaced(page, page.getByRole("table").first(), async () => {
        await page.getByLabel("End user id", { exact: true }).first().fill(eu.id);
        await page.getByLabel("Status", { exact: true }).selectOption("pending");
        await page.getByRole("button", { name: "Apply filters", exact: true }).click();
      });
      await page.getByRole("link", { name: "Grace pending", exact: true }).waitFor();
      expect(await page.getByRole("link", { name: "Nobody's pending", exact: true }).count()).toBe(0);
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    });
  });
});
