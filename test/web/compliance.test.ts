import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { untilReplaced } from "./pages-support";
import { type Dashboard, hasChromium, onPage, startDashboard } from "./support";

// "Keep everything of this patient for the lawsuit" and "who did what to it", from the
// dashboard: a hold placed and released in the browser stops and then allows a deletion
// through the API, and the audit log, filtered by the end user's id, shows all three with
// who did each.
describe.skipIf(!hasChromium)("compliance in the dashboard", () => {
  let d: Dashboard;
  beforeAll(async () => {
    d = await startDashboard();
  });
  afterAll(async () => {
    await d?.stop();
  });

  test("a legal hold placed in the browser blocks deletion until released; the audit log shows each step and its actor", async () => {
    const key = d.tenant!.test;
    const endUser = (await d.call("POST", "/v1/end-users", { key, body: { name: "Patient Zero", external_id: "p-0" } })).body;
    await onPage(await d.newSignedInPage(), "compliance", async (page) => {
      await page.getByRole("link", { name: "Compliance", exact: true }).click();
      await page.getByText("Place a legal hold").click();
      await page.getByLabel("Matter", { exact: true }).fill("Doe v. Clinic");
      await page.getByLabel("Covers").selectOption("end_user_id");
      await page.getByLabel("Id", { exact: true }).fill(endUser.id);
      await page.getByRole("button", { name: "Place hold" }).click();
      const row = page.getByRole("row").filter({ hasText: "Doe v. Clinic" });
      await row.filter({ hasText: "active" }).waitFor();

      const refused = await d.call("DELETE", `/v1/end-users/${endUser.id}`, { key });
      expect(refused.status).toBe(409);
      expect(refused.body.error.code).toBe("legal_hold_active");

      await row.getByRole("button", { name: "Release Doe v. Clinic" }).click();
      await page.getByRole("dialog").getByRole("button", { name: "Release" }).click();
      await row.filter({ hasText: "released" }).waitFor();
      expect((await d.call("DELETE", `/v1/end-users/${endUser.id}`, { key })).status).toBeLessThan(300);

      const log = page.getByRole("region", { name: "Audit log" });
      // The unfiltered log shows these actions too: look in the log the filter brought.
      await untilReplaced(page, log, async () => {
        await page.getByLabel("Resource id").fill(endUser.id);
        await page.getByRole("button", { name: "Filter" }).click();
      });
      for (const action of ["legal_hold.create", "legal_hold.release", "end_user.delete"]) await log.getByRole("row").filter({ hasText: action }).waitFor();
      expect(await log.getByRole("row").filter({ hasText: "legal_hold.create" }).textContent()).toContain(d.admin.email);
      // Filtered: nothing about other resources.
      expect(await log.getByRole("row").filter({ hasText: "key.create" }).count()).toBe(0);
    });
  });

  test("retention set on the page keeps the project's other settings; an export started on the page completes and downloads as a zip", async () => {
    const key = d.tenant!.test;
    await d.call("PUT", "/v1/config/project", { key, body: { auto_summarize: false } });
    const endUser = (await d.call("POST", "/v1/end-users", { key, body: { name: "Patient One" } })).body;
    await onPage(await d.newSignedInPage(), "compliance-retention-exports", async (page) => {
      await page.getByRole("link", { name: "Compliance", exact: true }).click();
      await page.getByLabel("Delete audio after (days)").fill("2555");
      await page.getByRole("button", { name: "Save retention" }).click();
      await page.getByText("Now: 2555").waitFor();
      const level = (await d.call("GET", "/v1/config/project", { key })).body;
      expect(level.overrides).toMatchObject({ retention_audio_days: 2555, auto_summarize: false });

      await page.getByLabel("Delete transcripts after (days)").fill("soon");
      await page.getByRole("button", { name: "Save retention" }).click();
      await page.locator("[data-param=retention_transcript_days] .field-error").filter({ hasText: /./ }).waitFor();

      await page.getByText("Export for eDiscovery").click();
      await page.getByLabel("Case or matter").fill("Roe v. Clinic");
      await page.getByLabel("End user", { exact: true }).selectOption(endUser.id);
      await page.getByRole("button", { name: "Start export" }).click();
      await page.getByRole("row").filter({ hasText: "Roe v. Clinic" }).waitFor();
      await d.deps.queue.drain(); // the test app runs jobs when told to; the page follows the export
      const download = page.getByRole("link", { name: "Download Roe v. Clinic" });
      await download.waitFor();
      const archive = await page.request.get(new URL((await download.getAttribute("href"))!, d.base).toString());
      expect(archive.status()).toBe(200);
      expect(
        Buffer.from(await archive.body())
          .subarray(0, 2)
          .toString(),
      ).toBe("PK");
    });
  });
});
