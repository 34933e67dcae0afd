import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { openFromNav, untilReplaced } from "./pages-support";
import { type Dashboard, hasChromium, onPage, startDashboard } from "./support";

/** End users in a real browser: cursor pages through the list, a find by external id, an end user's page. */
describe.skipIf(!hasChromium)("end users in the dashboard", () => {
  let d: Dashboard;

  beforeAll(async () => {
    d = await startDashboard();
    for (let i = 1; i <= 23; i++) {
      await d.call("POST", "/v1/end-users", { key: d.tenant!.test, body: { name: `Patient ${String(i).padStart(2, "0")}`, external_id: `p-${i}` } });
      d.clock.advance(1000); // distinct created_at, so "newest first" is one order
    }
  });
  afterAll(() => d?.stop());

  test("the list pages by cursor (20, then 3, and back), finds by external id, and opens an end user", async () => {
    await onPage(await d.newSignedInPage({ phone: true }), "end-users", async (page) => {
      await openFromNav(page, "End users");
      const rows = page.getByRole("table").getByRole("link");
      await rows.first().waitFor();
      expect(await rows.count()).toBe(20);
      expect(await rows.first().textContent()).toBe("Patient 23");
      await page.getByText("Page 1 · 23 in all").waitFor();

      await page.getByRole("button", { name: "Next page", exact: true }).click();
      await page.getByText("Page 2 · 23 in all").waitFor();
      expect(await rows.allTextContents()).toEqual(["Patient 03", "Patient 02", "Patient 01"]);
      expect(await page.getByRole("button", { name: "Next page", exact: true }).isDisabled()).toBe(true);
      await page.getByRole("button", { name: "Previous page", exact: true }).click();
      await page.getByText("Page 1 · 23 in all").waitFor();

      // Page 1 shows Patient 07 too: look in the list the search brought.
      await untilReplaced(page, page.getByRole("table"), async () => {
        await page.getByRole("searchbox", { name: "Find by external id" }).fill("p-7");
        await page.getByRole("button", { name: "Search", exact: true }).click();
      });
      await page.getByRole("link", { name: "Patient 07", exact: true }).waitFor();
      expect(await rows.allTextContents()).toEqual(["Patient 07"]);
      expect(page.url()).toContain("external_id=p-7");
      await page.getByRole("link", { name: "Patient 07", exact: true }).click();
      await page.getByRole("heading", { name: "Patient 07", level: 1 }).waitFor();
      await page.getByRole("region", { name: "Devices" }).getByText("No device is bound to this end user.").waitFor();
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    });
  });
});
