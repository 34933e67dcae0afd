import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { BrowserContext, Page } from "playwright-core";
import { ensureTestModels } from "../../scripts/test-models/cache";
import { systemClock } from "../../src/clock";
import { operatorActor } from "../../src/modules/audit/service";
import { issueInvite } from "../../src/modules/portal/invites";
import { seedRecording } from "../modules/pipeline-fixtures";
import { type Dashboard, hasChromium, onPage, startDashboard } from "./support";

const SAMPLE = join(import.meta.dir, "../../src/simulator/samples/team-standup.opus");

/**
 * What a wearer does with their own recording in the portal, at 390 px, over a transcript
 * and summary the real pipeline made (whisper.cpp and llama.cpp on tiny generated models:
 * random words, so the test searches for a word the transcript really has). Ask uses the
 * extractive provider: deterministic citations.
 */
describe.skipIf(!hasChromium)("the wearer's portal: transcript, search, Ask, downloads", () => {
  let d: Dashboard;
  let context: BrowserContext;
  let recordingId: string;
  let txn: { id: string; segments: { start: number; text: string }[]; speakers: { id: string; label: string }[] };
  let word: string;

  beforeAll(async () => {
    const models = ensureTestModels();
    d = await startDashboard({ clock: systemClock, env: { PARLEY_WHISPER_MODEL: models.whisper, PARLEY_LLM_MODEL: models.gguf } });
    const key = d.tenant!.test;
    await d.call("PUT", "/v1/config/project", { key, body: { auto_summarize: false, ask_provider: "extractive" } });
    const wearer = (await d.call("POST", "/v1/end-users", { key, body: { name: "Dr. Ana Weber" } })).body.id;
    recordingId = await seedRecording(d.deps, { projectId: d.tenant!.project.id, mode: "test" }, new Uint8Array(readFileSync(SAMPLE)), { endUserId: wearer });
    d.deps.db.query("UPDATE recordings SET name = ? WHERE id = ?").run("Ward round", recordingId);
    await d.call("POST", "/v1/transcriptions", { key, body: { recording_id: recordingId, language: "en" } });
    await d.deps.queue.drain();
    txn = (await d.call("GET", `/v1/transcriptions?recording_id=${recordingId}`, { key })).body.data[0];
    expect(txn.segments.length).toBeGreaterThan(1);
    word = txn.segments
      .map((s) => s.text)
      .join(" ")
      .match(/[a-z0-9]{3,}/i)![0];
    await d.call("POST", "/v1/summaries", { key, body: { transcription_id: txn.id, template: "general" } });
    await d.deps.queue.drain();

    const link = issueInvite(d.deps, { projectId: d.tenant!.project.id, mode: "test" }, wearer, operatorActor(), d.base).url;
    context = await d.browser.newContext({ viewport: { width: 390, height: 844 }, ignoreHTTPSErrors: true });
    const page = await context.newPage();
    await page.goto(link);
    await page.getByRole("heading", { name: "My recordings" }).waitFor();
    await page.close();
  }, 180_000);
  afterAll(async () => {
    await context?.close();
    await d?.stop();
  });

  const currentTime = (page: Page) => page.evaluate(() => document.querySelector("audio")!.currentTime);

  test("the transcript under the audio: tapping a line, or Enter on it, plays from there; summaries by template; downloads", async () => {
    await onPage(await context.newPage(), "portal-transcript", async (page) => {
      await page.goto(`${d.base}/me#/r/${recordingId}`);
      const segments = page.getByRole("list", { name: "Transcript segments" }).getByRole("button");
      await segments.first().waitFor();
      expect(await segments.count()).toBe(txn.segments.length);
      const last = txn.segments.at(-1)!;
      await segments.last().click();
      expect(await currentTime(page)).toBeGreaterThanOrEqual(last.start - 0.05);
      expect(await segments.last().getAttribute("aria-current")).toBe("true");
      await segments.first().focus();
      await page.keyboard.press("Enter");
      await page.waitForFunction((s) => document.querySelector("audio")!.currentTime < s, last.start);

      await page.getByRole("article", { name: "General summary" }).waitFor();
      for (const name of ["Audio", "Transcript"]) {
        const href = (await page.getByRole("link", { name, exact: true }).getAttribute("href"))!;
        expect(await page.evaluate((url) => fetch(url, { cache: "no-store" }).then((r) => r.status), href)).toBe(200);
      }
      expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
    });
  });

  test("a speaker renamed in the portal is named in the transcript", async () => {
    if (!txn.speakers.length) throw new Error("the tiny pipeline told no speakers apart: nothing to rename");
    await onPage(await context.newPage(), "portal-speakers", async (page) => {
      await page.goto(`${d.base}/me#/r/${recordingId}`);
      const speaker = txn.speakers[0]!;
      const field = page.getByLabel(`Name for ${speaker.id}`);
      await field.fill("Dr. Ana Weber");
      await field.press("Enter");
      await page.getByRole("list", { name: "Transcript segments" }).getByText("Dr. Ana Weber").first().waitFor();
      const renamed = (await d.call("GET", `/v1/transcriptions/${txn.id}`, { key: d.tenant!.test })).body;
      expect(renamed.speakers.find((s: { id: string }) => s.id === speaker.id).label).toBe("Dr. Ana Weber");
    });
  });

  test("search the library: a hit opens the recording at its moment", async () => {
    await onPage(await context.newPage(), "portal-search", async (page) => {
      await page.goto(`${d.base}/me#/search`);
      await page.getByRole("searchbox", { name: "Search my recordings" }).fill(word);
      await page.keyboard.press("Enter");
      const hit = page.getByRole("list", { name: "Search results" }).getByRole("link").first();
      await hit.waitFor();
      const offsetMs = Number(new URLSearchParams((await hit.getAttribute("href"))!.split("?")[1]).get("t"));
      await hit.click();
      await page.getByRole("list", { name: "Transcript segments" }).waitFor();
      await page.waitForFunction((s) => document.querySelector("audio")!.currentTime >= s - 0.05, offsetMs / 1000);
    });
  });

  test("Ask: a citation jumps to the moment, playing", async () => {
    await onPage(await context.newPage(), "portal-ask", async (page) => {
      await page.goto(`${d.base}/me#/ask`);
      await page.getByLabel("Ask about my conversations").fill(`What was said about ${word}?`);
      await page.getByRole("button", { name: "Ask", exact: true }).click();
      const citation = page.locator("a.citation").first();
      await citation.waitFor();
      const offsetMs = Number(new URLSearchParams((await citation.getAttribute("href"))!.split("?")[1]).get("t"));
      await citation.click();
      await page.getByRole("list", { name: "Transcript segments" }).waitFor();
      await page.waitForFunction((s) => {
        const a = document.querySelector("audio")!;
        return !a.paused && a.currentTime > s;
      }, offsetMs / 1000);
    });
  });
});
