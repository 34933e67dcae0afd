// The Recordings page's "Reprocess all failed" (issue #31 item 12), in a real browser on the
// real pipeline: a recording that failed for want of the whisper model completes after the
// model is installed and the button is pressed.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { ensureTestModels } from "../../scripts/test-models/cache";
import { systemClock } from "../../src/clock";
import { modelFilePath } from "../../src/model-files/manifest";
import { uploadedRecording } from "../modules/recordings-support";
import { openFromNav } from "./pages-support";
import { type Dashboard, hasChromium, onPage, screenshot, startDashboard } from "./support";

describe.skipIf(!hasChromium)("Reprocess all failed, on the Recordings page", () => {
  let d: Dashboard;
  beforeAll(async () => {
    // The default whisper model by name, not installed yet.
    d = await startDashboard({ clock: systemClock, env: { PARLEY_LLM_MODEL: ensureTestModels().gguf } });
    await d.call("PUT", "/v1/config/project", { key: d.tenant!.test, body: { auto_summarize: false } });
  });
  afterAll(() => d?.stop());

  test("the button queues the failed recording again and it completes", async () => {
    const key = d.tenant!.test;
    const { recording } = await uploadedRecording(d, key);
    await d.deps.queue.drain();
    const status = async () => (await d.call("GET", `/v1/recordings/${recording.id}`, { key })).body.status;
    // The transcription failed, the recording's audio is fine: it stays uploaded (decision 129).
    expect(await status()).toBe("uploaded");

    const whisper = modelFilePath(d.deps.config.modelsDir, d.deps.config.models.whisper);
    mkdirSync(dirname(whisper), { recursive: true });
    copyFileSync(ensureTestModels().whisper, whisper);

    await onPage(await d.newSignedInPage(), "reprocess-failed", async (page) => {
      await openFromNav(page, "Recordings");
      await page.getByRole("button", { name: "Reprocess all failed" }).click();
      await page.getByRole("status").getByText("1 failed recording(s) queued for transcription again.").waitFor();
      // The table is read again: the recording is processing now, no longer failed.
      await page.getByRole("table").getByText("processing").waitFor();
      await screenshot(page, "recordings-reprocess-failed");
    });
    await d.deps.queue.drain();
    expect(await status()).toBe("completed");
  }, 60_000);
});
