import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { BrowserContext, Page } from "playwright-core";
import { operatorActor } from "../../src/modules/audit/service";
import { issueInvite } from "../../src/modules/portal/invites";
import { disclosureEngines } from "../modules/disclosures-fixtures";
import { concat, seedRecording, silence, voiced, wav } from "../modules/pipeline-fixtures";
import { type Dashboard, hasChromium, onPage, startDashboard } from "./support";

/**
 * Issue 25 in the wearer's portal: the wearer corrects their own transcript in place at
 * 390 px, from the keyboard, as the dashboard does (each change a revision, Undo a restore),
 * and the transcript they then play is the corrected one.
 */
describe.skipIf(!hasChromium)("the wearer corrects their transcript in the portal", () => {
  let d: Dashboard;
  let context: BrowserContext;
  let recording: string;
  let transcription: string;

  beforeAll(async () => {
    d = await startDashboard({ engines: disclosureEngines() });
    const key = d.tenant!.test;
    const wearer = (await d.call("POST", "/v1/end-users", { key, body: { name: "Dr. Ana Weber" } })).body.id;
    recording = await seedRecording(d.deps, { projectId: d.tenant!.project.id, mode: "test" }, wav(concat(voiced(2), silence(1), voiced(2))), {
      endUserId: wearer,
    });
    transcription = (await d.call("POST", "/v1/transcriptions", { key, body: { recording_id: recording } })).body.id;
    await d.deps.queue.drain();
    const link = issueInvite(d.deps, { projectId: d.tenant!.project.id, mode: "test" }, wearer, operatorActor(), d.base).url;
    context = await d.browser.newContext({ viewport: { width: 390, height: 844 }, ignoreHTTPSErrors: true });
    const page = await context.newPage();
    await page.goto(link);
    await page.getByRole("heading", { name: "My recordings" }).waitFor();
    await page.close();
  });
  afterAll(async () => {
    await context?.close();
    await d?.stop();
  });

  const latest = async () => (await d.call("GET", `/v1/transcriptions/${transcription}`, { key: d.tenant!.test })).body;
  const fitsTheScreen = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth);

  test("words and a speaker corrected as revisions, one undone; done editing plays the corrected transcript", async () => {
    const original = await latest();
    expect(original.segments[0].text).toContain("headache");
    await onPage(await context.newPage(), "portal-corrections", async (page) => {
      await page.goto(`${d.base}/me#/r/${recording}`);
      await page.getByRole("button", { name: "Edit transcript" }).click();
      const undo = page.getByRole("button", { name: "Undo" });
      expect(await undo.isDisabled()).toBe(true);

      // From the keyboard: a field is saved when Tab leaves it.
      const words = page.getByLabel("Words of segment 1");
      await words.fill("The patient reported a migraine since Monday.");
      await words.press("Tab");
      await page.getByRole("status").filter({ hasText: "Saved as revision 1." }).waitFor();
      const speaker = page.getByLabel("Speaker of segment 1");
      await speaker.fill("Dr. Weber");
      await speaker.press("Tab");
      await page.getByRole("status").filter({ hasText: "Saved as revision 2." }).waitFor();
      expect((await latest()).segments[0].speaker).toBe("Dr. Weber");
      expect(await fitsTheScreen(page)).toBe(true);

      await undo.click();
      await page.getByRole("status").filter({ hasText: "Undone: revision 3 restores revision 1." }).waitFor();
      const undone = await latest();
      expect(undone.segments[0].speaker).toBe(original.segments[0].speaker);
      expect(undone.segments[0].text).toBe("The patient reported a migraine since Monday.");
      expect(await page.getByLabel("Speaker of segment 1").inputValue()).toBe(original.segments[0].speaker);

      await page.getByRole("button", { name: "Done editing" }).click();
      await page.getByRole("button", { name: "Edit transcript" }).waitFor();
      const transcript = page.getByRole("region", { name: "Transcript" });
      await transcript.locator(".segment").filter({ hasText: "migraine" }).waitFor();
      // (The summary, made before, still says headache: only the transcript is corrected.)
      expect(await transcript.getByText("headache").count()).toBe(0);
      expect(await fitsTheScreen(page)).toBe(true);
    });
  });
});
