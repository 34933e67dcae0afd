// Issue 31, item 2: one source of verdicts for the System page, `parley doctor` and
// GET /v1/health; the page's headline is the worst verdict below it (decision 119).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import { ensureTestModels } from "../../scripts/test-models/cache";
import { makeTempDir } from "../helpers";
import { seedRecording } from "../modules/search-corpus";
import { openFromNav } from "./pages-support";
import { type Dashboard, hasChromium, onPage, screenshot, startDashboard } from "./support";

const models = ensureTestModels();
const FAILURE = "The transcriber model whisper-base.en is not installed.";

/** The checks list once it ran: name -> [verdict, detail]. */
async function checks(page: Page): Promise<Record<string, [string, string]>> {
  const list = page.getByRole("region", { name: "Checks (parley doctor)" }).locator("ul.checks");
  await list.waitFor({ timeout: 60_000 });
  return list.evaluate((ul) => {
    const out: Record<string, [string, string]> = {};
    for (const li of Array.from(ul.children)) out[li.querySelector("strong")!.textContent!] = [li.querySelector(".badge")!.textContent!, li.textContent!];
    return out;
  });
}

/** The Models table's row for an engine: [status, install with]. */
async function modelRow(page: Page, engine: string): Promise<string[]> {
  // By text, not by accessible name: on a phone each cell's name starts with its column's label.
  const row = page
    .getByRole("region", { name: "Models" })
    .locator("tbody tr")
    .filter({ has: page.locator("td:first-child", { hasText: new RegExp(`^${engine}$`) }) });
  return row
    .locator("td")
    .allTextContents()
    .then((cells) => cells.slice(2));
}

describe.skipIf(!hasChromium)("System page: one verdict per thing, the headline the worst of them", () => {
  let d: Dashboard;
  beforeAll(async () => {
    // Every model's file is there (GET /v1/health: ok), but the embedder's folder holds no model: it fails to load.
    d = await startDashboard({
      env: { PARLEY_WHISPER_MODEL: models.whisper, PARLEY_LLM_MODEL: models.gguf, PARLEY_EMBEDDING_MODEL: makeTempDir(), PARLEY_GPU: "off" },
    });
    const recording = seedRecording(d.deps, { projectId: d.tenant!.project.id, mode: "test" }, { endUserId: null, recordedAt: null });
    d.deps.db
      .query("UPDATE recordings SET status = 'failed', error = ? WHERE id = ?")
      .run(JSON.stringify({ code: "processing_error", message: FAILURE }), recording);
  });
  afterAll(() => d?.stop());

  for (const phone of [false, true]) {
    test(`${phone ? "390" : "1280"} px: a failing check makes the headline fail; an engine that fails to load is not "installed"; a warning is "warn"; failed recordings are counted`, async () => {
      const page = await d.newSignedInPage({ phone });
      await onPage(page, `system-truth-${phone ? 390 : 1280}`, async () => {
        await openFromNav(page, "System");
        const found = await checks(page);
        expect(found.embedder?.[0]).toBe("fail");
        expect(found.transcriber?.[0]).toBe("ok");
        // doctor says "warn" here (the master key beside the audio): so does the page.
        expect(found["encryption at rest"]?.[0]).toBe("warn");
        expect(found["failed recordings"]?.[0]).toBe("warn");
        expect(found["failed recordings"]?.[1]).toContain(`1 recording(s) failed processing; the latest: ${FAILURE}`);

        // The headline is the worst verdict below it, although /v1/health alone says ok (every file is there).
        expect((await d.call("GET", "/v1/health")).body.status).toBe("ok");
        await page.locator("#system-status", { hasText: "Status fail" }).waitFor();
        // The Models table agrees with the embedder's check.
        await page.getByRole("region", { name: "Models" }).getByText("fails to load", { exact: true }).waitFor();
        const [status, install] = await modelRow(page, "embedder");
        expect(status).toBe("fails to load");
        expect(install).toContain("fails to load");
        expect((await modelRow(page, "transcriber"))[0]).toBe("installed");
        expect(await page.getByRole("region", { name: "Failed jobs" }).textContent()).toContain("No job gave up after its retries.");
        await screenshot(page, `system-truth-${phone ? 390 : 1280}`);
      });
    });
  }
});
