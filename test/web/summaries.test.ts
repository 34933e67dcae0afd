import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import { systemClock } from "../../src/clock";
import { ScriptedLlm } from "../../src/engines/llm.test-double";
import { ScriptedTranscriber } from "../../src/engines/transcriber.test-double";
import { seedRecording, voicedBurst, wav } from "../modules/pipeline-fixtures";
import { visit } from "./pages-support";
import { type Dashboard, hasChromium, onPage, startDashboard } from "./support";

const TITLE = "Weekly **budget** sync <img src=x onerror=window.__pwned=1>";

type Schema = { properties: Record<string, { type: string }> };

/** The clinical and the other templates' prose fields (sentences); the rest are lists. */
const PROSE = new Set(["summary", "chief_complaint", "subjective", "objective", "assessment"]);

/**
 * The model's answer for every template: a title with bold and an HTML tag in it (which
 * must show as text), lists of two items, one sentence per prose field. Every statement
 * cites segment 2 (the second utterance) but the second item of a list, which cites none.
 * The real summary job reads the citations and renders the Markdown the page shows.
 */
function answer(text: string, request: { jsonSchema?: object }): string {
  const schema = request.jsonSchema as Schema | undefined;
  if (!schema?.properties) return text;
  const value = (key: string) =>
    key === "title"
      ? TITLE
      : PROSE.has(key)
        ? [{ text: "The team met before the clinic opened.", segments: [2] }]
        : [
            { text: "Budget review moves to **Friday**", segments: [2] },
            { text: "Grace sends the `numbers`", segments: [] },
          ];
  return JSON.stringify(Object.fromEntries(Object.keys(schema.properties).map((key) => [key, value(key)])));
}

/** Two segments, the halves of the audio decoded, so a citation of the second opens the recording past its start. */
const twoUtterances = new ScriptedTranscriber({
  segments: (pcm) =>
    [0, 1].map((i) => ({ start: (i * pcm.length) / 32_000, end: ((i + 1) * pcm.length) / 32_000, text: `utterance ${i + 1}`, confidence: 0.9 })),
});

/**
 * Summaries render their Markdown (issue 31, item 7): headings, lists and bold as such,
 * safely (HTML in a summary is text), and the four templates lay out in even columns.
 */
describe.skipIf(!hasChromium)("summaries in the dashboard", () => {
  let d: Dashboard;
  let recordingId: string;
  /** The transcript's second segment, which the statements cite. */
  let second: { start: number; end: number };

  beforeAll(async () => {
    d = await startDashboard({ clock: systemClock, engines: { transcriber: twoUtterances, llm: new ScriptedLlm({ answer }) } });
    const key = d.tenant!.test;
    await d.call("PUT", "/v1/config/project", { key, body: { auto_summarize: false } });
    recordingId = await seedRecording(d.deps, { projectId: d.tenant!.project.id, mode: "test" }, wav(voicedBurst(4, 0.5, 3.5)));
    await d.call("POST", "/v1/transcriptions", { key, body: { recording_id: recordingId, language: "en" } });
    await d.deps.queue.drain();
    const txn = (await d.call("GET", `/v1/transcriptions?recording_id=${recordingId}`, { key })).body.data[0];
    for (const template of ["general", "sales", "clinical", "legal"])
      await d.call("POST", "/v1/summaries", { key, body: { transcription_id: txn.id, template } });
    await d.deps.queue.drain();
    const summaries = (await d.call("GET", `/v1/summaries?transcription_id=${txn.id}`, { key })).body.data;
    expect(summaries.map((s: { status: string }) => s.status)).toEqual(["completed", "completed", "completed", "completed"]);
    expect(txn.segments.length).toBeGreaterThanOrEqual(2);
    second = txn.segments[1];
    expect(second.start).toBeGreaterThan(0.5);
  }, 60_000);
  afterAll(() => d?.stop());

  const cards = (page: Page) => page.locator("article.summary").evaluateAll((els) => els.map((el) => el.getBoundingClientRect().toJSON() as DOMRect));

  test("a summary shows headings, lists and bold, and HTML in it as text", async () => {
    await onPage(await d.newSignedInPage(), "summaries-markdown", async (page) => {
      await visit(page, `${d.base}/dashboard#/recordings/${recordingId}`, /rec_/);
      const general = page.getByRole("article", { name: "General summary" });
      const title = general.getByRole("heading", { level: 4 });
      await title.waitFor();
      expect(await title.textContent()).toBe("Weekly budget sync <img src=x onerror=window.__pwned=1>");
      expect(await title.locator("strong").textContent()).toBe("budget");
      await general.getByRole("heading", { name: "Key points", level: 5 }).waitFor();
      const points = general.getByRole("list").first().getByRole("listitem");
      expect(await points.count()).toBe(2);
      expect(await points.first().locator(".statement").textContent()).toStartWith("Budget review moves to Friday ");
      expect(await points.nth(1).locator("code").textContent()).toBe("numbers");
      expect(await general.locator("img").count()).toBe(0);
      expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
      expect(await points.first().locator("strong").textContent()).toBe("Friday");
      // No Markdown punctuation is left at the start of a line.
      const lines = (await general.locator(".summary-text").innerText()).split("\n");
      expect(lines.filter((l) => /^\s*(#|- )/.test(l))).toEqual([]);
    });
  });

  test("each statement shows its citations as links that play the moment; a statement without one is marked", async () => {
    await onPage(await d.newSignedInPage(), "summaries-citations", async (page) => {
      await visit(page, `${d.base}/dashboard#/recordings/${recordingId}`, /rec_/);
      const points = page.getByRole("article", { name: "General summary" }).getByRole("list").first().getByRole("listitem");
      const cited = points.first().locator("a.citation");
      await cited.waitFor();
      const startMs = Math.round(second.start * 1000);
      expect(await cited.getAttribute("href")).toBe(`#/recordings/${recordingId}?t=${startMs}&play=1`);
      expect(await points.first().locator(".unsupported-mark").count()).toBe(0);
      // The second point cites nothing: marked, with no link.
      expect(await points.nth(1).locator(".unsupported-mark").textContent()).toBe("no evidence");
      expect(await points.nth(1).locator("a.citation").count()).toBe(0);
      await cited.click();
      // The recording opens at the cited moment and plays it (the playhead moves past it).
      await page.waitForFunction((s) => {
        const a = document.querySelector("audio");
        return !!a && !a.paused && a.currentTime > s;
      }, second.start);
      expect(await page.evaluate(() => document.querySelector("audio")!.currentTime)).toBeLessThan(second.end + 1.5);
    });
  });

  test("the four templates lay out evenly: two equal columns on a wide screen, one on a phone", async () => {
    await onPage(await d.newSignedInPage(), "summaries-layout-wide", async (page) => {
      await visit(page, `${d.base}/dashboard#/recordings/${recordingId}`, /rec_/);
      await page.getByRole("article", { name: "Legal summary" }).getByRole("heading", { level: 5 }).first().waitFor();
      const [a, b, c, e] = await cards(page);
      expect(a!.top).toBe(b!.top);
      expect(c!.top).toBe(e!.top);
      expect(c!.top).toBeGreaterThan(a!.top);
      expect(new Set([a, b, c, e].map((r) => Math.round(r!.width))).size).toBe(1);
      expect(Math.round(a!.height)).toBe(Math.round(b!.height));
    });
    await onPage(await d.newSignedInPage({ phone: true }), "summaries-layout-phone", async (page) => {
      await visit(page, `${d.base}/dashboard#/recordings/${recordingId}`, /rec_/);
      await page.getByRole("article", { name: "Legal summary" }).getByRole("heading", { level: 5 }).first().waitFor();
      const rects = await cards(page);
      expect(new Set(rects.map((r) => r.left)).size).toBe(1);
      for (const r of rects) expect(r.right).toBeLessThanOrEqual(390);
    });
  });
});
