import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import { ensureTestModels } from "../../scripts/test-models/cache";
import { systemClock } from "../../src/clock";
import { seedRecording, voicedBurst, wav } from "../modules/pipeline-fixtures";
import { openFromNav, visit } from "./pages-support";
import { type Dashboard, hasChromium, onPage, startDashboard } from "./support";

/**
 * Search and Ask in a real browser over a transcript the real pipeline made (whisper.cpp on
 * a tiny generated model, so the words are random: the test searches for a word the
 * transcript really has). Ask uses the extractive provider: no model, deterministic
 * citations. Both lead to the recording, opened at the cited offset.
 */
describe.skipIf(!hasChromium)("search and ask in the dashboard", () => {
  let d: Dashboard;
  let recordingId: string;
  let word: string;

  beforeAll(async () => {
    const models = ensureTestModels();
    d = await startDashboard({ clock: systemClock, env: { PARLEY_WHISPER_MODEL: models.whisper } });
    const key = d.tenant!.test;
    await d.call("PUT", "/v1/config/project", { key, body: { auto_summarize: false } });
    const eu = (await d.call("POST", "/v1/end-users", { key, body: { name: "Ada Lovelace" } })).body;
    recordingId = await seedRecording(d.deps, { projectId: d.tenant!.project.id, mode: "test" }, wav(voicedBurst(12, 0.5, 11.5)), { endUserId: eu.id });
    await d.call("POST", "/v1/transcriptions", { key, body: { recording_id: recordingId, language: "en" } });
    await d.deps.queue.drain();
    const txn = (await d.call("GET", `/v1/transcriptions?recording_id=${recordingId}`, { key })).body.data[0];
    expect(txn.status).toBe("completed");
    word = txn.segments
      .map((s: { text: string }) => s.text)
      .join(" ")
      .match(/[a-z0-9]{3,}/i)![0];
  }, 120_000);
  afterAll(() => d?.stop());

  const audioState = (page: Page) =>
    page.evaluate(() => ({ t: document.querySelector("audio")!.currentTime, paused: document.querySelector("audio")!.paused }));

  test("search an end user's library; a result opens its recording at the chunk's offset", async () => {
    await onPage(await d.newSignedInPage(), "search", async (page) => {
      await openFromNav(page, "Search");
      await page.getByLabel("End user", { exact: true }).selectOption({ label: "Ada Lovelace" });
      await page.getByLabel("Search for", { exact: true }).fill(word);
      await page.getByRole("button", { name: "Search", exact: true }).click();
      const hit = page
        .getByRole("region", { name: "Search results" })
        .getByRole("link", { name: new RegExp(recordingId) })
        .first();
      await hit.waitFor();
      const href = (await hit.getAttribute("href"))!;
      const offsetMs = Number(new URLSearchParams(href.split("?")[1]).get("t"));
      await hit.click();
      await page.getByRole("list", { name: "Transcript segments" }).waitFor();
      await page.waitForFunction((s) => document.querySelector("audio")!.currentTime >= s - 0.05, offsetMs / 1000);
    });
  });

  test("ask the library; a citation opens the recording at its millisecond, playing", async () => {
    await onPage(await d.newSignedInPage(), "ask", async (page) => {
      await openFromNav(page, "Ask");
      await page.getByLabel("Scope", { exact: true }).selectOption({ label: "An end user's library" });
      await page.getByLabel("End user", { exact: true }).selectOption({ label: "Ada Lovelace" });
      await page.getByLabel("Provider", { exact: true }).selectOption({ label: "Extractive (quotes, no model)" });
      await page.getByLabel("Question", { exact: true }).fill(`What was said about ${word}?`);
      await page.getByRole("button", { name: "Ask", exact: true }).click();
      const log = page.getByRole("log", { name: "Conversation" });
      const citation = log.getByRole("link", { name: new RegExp(`^Play ${recordingId} from`) }).first();
      await citation.waitFor();
      const href = (await citation.getAttribute("href"))!;
      const offsetMs = Number(new URLSearchParams(href.split("?")[1]).get("t"));
      expect(href).toContain("play=1");

      await citation.click();
      await page.getByRole("list", { name: "Transcript segments" }).waitFor();
      // At the cited offset, and playing: the playhead moves on from there.
      await page.waitForFunction((s) => {
        const a = document.querySelector("audio")!;
        return !a.paused && a.currentTime > s;
      }, offsetMs / 1000);
      const { t } = await audioState(page);
      expect(t).toBeGreaterThan(offsetMs / 1000);
      expect(t).toBeLessThan(offsetMs / 1000 + 10);

      // Back in the chat, a follow-up question goes to the same session. Asked as soon as the form
      // shows, with the chat's history held back a second: the history is in the log before the
      // form is, so it cannot wipe the follow-up when it comes.
      await page.route("**/v1/ask/sessions/*/messages?*", async (route) => {
        if (route.request().method() === "GET") await Bun.sleep(1000);
        await route.continue();
      });
      await page.goBack();
      await page.getByLabel("Question", { exact: true }).waitFor();
      expect(await log.getByText(`What was said about ${word}?`).count()).toBeGreaterThan(0);
      await page.getByLabel("Question", { exact: true }).fill(`And ${word} again?`);
      await page.getByRole("button", { name: "Ask", exact: true }).click();
      await log.getByText(`And ${word} again?`).waitFor();
      await page.waitForFunction(() => document.querySelectorAll("[role=log] article").length >= 4);
    });
  });
  test("ask about selected recordings, ticked from the end user's list", async () => {
    await onPage(await d.newSignedInPage({ phone: true }), "ask-selected", async (page) => {
      await visit(page, `${d.base}/dashboard#/ask`, "Ask");
      await page.getByLabel("Scope", { exact: true }).selectOption({ label: "Selected recordings" });
      await page.getByLabel("End user", { exact: true }).selectOption({ label: "Ada Lovelace" });
      await page.getByRole("group", { name: "Recordings to ask about" }).getByRole("checkbox").first().check();
      await page.getByLabel("Provider", { exact: true }).selectOption({ label: "Extractive (quotes, no model)" });
      await page.getByLabel("Question", { exact: true }).fill(word);
      await page.getByRole("button", { name: "Ask", exact: true }).click();
      await page
        .getByRole("log", { name: "Conversation" })
        .getByRole("link", { name: new RegExp(`^Play ${recordingId} from`) })
        .first()
        .waitFor();
      expect(await page.getByText("About 1 selected recording").count()).toBe(1);
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    });
  });
});
