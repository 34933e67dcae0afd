import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type Dashboard, hasChromium, onPage, startDashboard } from "./support";

const PAGES = ["Keys", "Devices", "End users", "Recordings", "Search", "Ask", "Webhooks", "System"];

describe.skipIf(!hasChromium)("dashboard shell in a real browser", () => {
  let d: Dashboard;
  beforeAll(async () => {
    d = await startDashboard();
  });
  afterAll(() => d?.stop());

  test("signing in shows every page's link by name, the project and the administrator; nothing is fetched from elsewhere", async () => {
    const page = await d.browser.newPage();
    const foreign: string[] = [];
    page.on("request", (r) => {
      if (!r.url().startsWith(d.base)) foreign.push(r.url());
    });
    await onPage(page, "shell-sign-in", async () => {
      await page.goto(`${d.base}/dashboard`);
      await page.getByLabel("Email").fill(d.admin.email);
      await page.getByLabel("Password").fill(d.admin.password);
      await page.getByRole("button", { name: "Sign in" }).click();
      const nav = page.getByRole("navigation", { name: "Main" });
      await nav.waitFor();
      for (const name of PAGES) expect(await nav.getByRole("link", { name, exact: true }).count()).toBe(1);
      expect(await page.getByRole("combobox", { name: "Project" }).inputValue()).toBe(d.tenant!.project.id);
      expect(await page.getByRole("combobox", { name: "Mode" }).inputValue()).toBe("test");
      expect(await page.textContent("#who")).toBe(d.admin.email);
      expect(foreign).toEqual([]);
    });
  });
});
