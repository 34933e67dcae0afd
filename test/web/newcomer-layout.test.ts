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
});
