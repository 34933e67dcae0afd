// What a newcomer's first look at the dashboard on a phone found cut off: the models banner's
// commands, the first thing a fresh install shows, hid their ends (the LLM's model name) behind
// a sideways scroll with no scrollbar to hint at it.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { hasChromium, onPage, startDashboard, type Dashboard } from "./support";

describe.skipIf(!hasChromium)("the dashboard at 390 px, as a fresh install shows it", () => {
  let d: Dashboard;
  beforeAll(async () => {
    d = await startDashboard();
  });
  afterAll(() => d?.stop());

  test("every command of the models banner is shown whole, nothing of it scrolled out of sight", async () => {
    await onPage(await d.newSignedInPage({ phone: true }), "newcomer-banner-390", async (page) => {
      const notice = page.getByRole("status", { name: "Models not installed" });
      await notice.locator("code").first().waitFor();
      const cut = await notice
        .locator("p")
        .evaluateAll((ps) => ps.filter((p) => p.scrollWidth > p.clientWidth || p.getBoundingClientRect().right > window.innerWidth).map((p) => p.textContent));
      expect(cut).toEqual([]);
      // Each command is there in full, to be read and typed.
      const commands = await notice.locator("code").allTextContents();
      expect(commands.length).toBeGreaterThanOrEqual(4);
      for (const command of commands) expect(await notice.getByText(command, { exact: true }).isVisible()).toBe(true);
    });
  });

  test("the first visit's setup form says where more administrators are added, in commands that work in a checkout too", async () => {
    const fresh = await startDashboard({ admin: false });
    try {
      await onPage(await fresh.browser.newPage({ viewport: { width: 390, height: 844 } }), "newcomer-setup-390", async (page) => {
        await page.goto(`${fresh.base}/dashboard`);
        const form = page.getByRole("form", { name: "Create the first administrator" });
        await form.waitFor();
        const text = await form.textContent();
        expect(text).toContain("the Administrators page");
        expect(text).toContain("npm run parley -- admin create EMAIL");
      });
    } finally {
      await fresh.stop();
    }
  });
});
