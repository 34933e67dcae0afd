// Issue 31, item 5: the models banner and the System page's Models table give the advice the
// doctor gives, as parley runs here (`npm run parley -- ...` in a checkout), from one function;
// the banner is for a signed-in administrator, never on the setup or sign-in page (decision 121).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { runningCli } from "../../src/runtime/cli-name";
import { openFromNav } from "./pages-support";
import { type Dashboard, hasChromium, onPage, screenshot, signIn, startDashboard } from "./support";

const cli = runningCli();

describe.skipIf(!hasChromium)("the models banner (no model installed)", () => {
  let d: Dashboard;
  beforeAll(async () => {
    d = await startDashboard();
  });
  afterAll(() => d?.stop());

  for (const phone of [false, true]) {
    const width = phone ? 390 : 1280;
    test(`${width} px: none on the sign-in page; after signing in it names the doctor's commands, the Models table the same; gone after signing out`, async () => {
      const page = await d.browser.newPage(phone ? { viewport: { width: 390, height: 844 } } : {});
      await onPage(page, `models-banner-${width}`, async () => {
        await page.goto(`${d.base}/dashboard`);
        await page.getByRole("button", { name: "Sign in" }).waitFor();
        // Everything the sign-in page asks for has been answered: a banner would show by now.
        await page.waitForLoadState("networkidle");
        expect(await page.isVisible("#models-notice")).toBe(false);
        await screenshot(page, `models-banner-sign-in-${width}`);

        await signIn(page, d.base);
        const notice = page.getByRole("status", { name: "Models not installed" });
        await notice.waitFor();
        const text = (await notice.textContent())!;
        const missing = [d.deps.config.models.whisper, d.deps.config.models.llm, d.deps.config.models.embedding];
        for (const model of missing) expect(text).toContain(`${cli} models pull ${model}`);
        expect(text).toContain(`${cli} models import PATH`);
        if (cli !== "parley") expect(text).not.toMatch(/(^|[^-] )parley models/);
        await screenshot(page, `models-banner-${width}`);

        // The System page says the same in its Models table and in the doctor's checks.
        await openFromNav(page, "System");
        const models = page.getByRole("region", { name: "Models" });
        await models.getByRole("table").waitFor();
        const commands = await models.locator("td code").allTextContents();
        expect(commands).toEqual(missing.map((m) => `${cli} models pull ${m}`));
        expect(await models.textContent()).toContain(`${cli} models import PATH`);
        const checks = page.getByRole("region", { name: "Checks (parley doctor)" }).locator("ul.checks");
        await checks.waitFor({ timeout: 60_000 });
        expect(await checks.textContent()).toContain(`${d.deps.config.models.whisper} is not installed: ${cli} models pull ${d.deps.config.models.whisper}`);
        await screenshot(page, `models-banner-system-${width}`);

        // On a phone Sign out is behind Menu.
        if (await page.getByRole("button", { name: "Menu" }).isVisible()) await page.getByRole("button", { name: "Menu" }).click();
        await page.getByRole("button", { name: "Sign out" }).click();
        await page.getByRole("button", { name: "Sign in" }).waitFor();
        expect(await page.isVisible("#models-notice")).toBe(false);
      });
    });
  }
});
