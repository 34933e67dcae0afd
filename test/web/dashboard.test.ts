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

  // The notice reads GET /v1/health (public, nothing secret); the browser is the client under
  // test here, so each case answers that request itself.
  const health = (models: { engine: string; model: string; install: string | null }[]) => ({ status: 200, contentType: "application/json", body: JSON.stringify({ models }) });

  test("missing models are named first thing, with the commands that install them, before signing in", async () => {
    const page = await d.browser.newPage();
    await onPage(page, "models-notice", async () => {
      await page.route("**/v1/health", (route) =>
        route.fulfill(
          health([
            { engine: "transcriber", model: "whisper-base.en", install: "parley models pull whisper-base.en" },
            { engine: "llm", model: "qwen2.5-1.5b-instruct-q4", install: null },
            { engine: "embedder", model: "<b>all-minilm-l6-v2</b>", install: "parley models pull <b>all-minilm-l6-v2</b>" },
          ]),
        ),
      );
      await page.goto(`${d.base}/dashboard`);
      const notice = page.getByRole("status", { name: "Models not installed" });
      await notice.waitFor();
      const text = await notice.textContent();
      expect(text).toContain("parley models pull whisper-base.en (transcriber)");
      expect(text).toContain("parley models pull <b>all-minilm-l6-v2</b> (embedder)");
      expect(text).toContain("parley models import PATH");
      expect(text).not.toContain("qwen");
      await page.getByRole("button", { name: "Sign in" }).waitFor();
    });
  });

  test("no notice when every model is installed", async () => {
    const page = await d.browser.newPage();
    await onPage(page, "no-models-notice", async () => {
      let asked = false;
      await page.route("**/v1/health", (route) => {
        asked = true;
        return route.fulfill(health([{ engine: "transcriber", model: "whisper-base.en", install: null }]));
      });
      await page.goto(`${d.base}/dashboard`);
      await page.getByRole("button", { name: "Sign in" }).waitFor();
      await page.waitForFunction(() => performance.getEntriesByType("resource").some((e) => e.name.endsWith("/v1/health")));
      expect(asked).toBe(true);
      expect(await page.isVisible("#models-notice")).toBe(false);
    });
  });
});
