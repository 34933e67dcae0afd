import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { BrowserContext, Page } from "playwright-core";
import { seedRecording, voiced, wav } from "../modules/pipeline-fixtures";
import { type Dashboard, hasChromium, onPage, startDashboard } from "./support";

const PHONE = { viewport: { width: 390, height: 844 }, ignoreHTTPSErrors: true };

/**
 * The wearer's portal at /me in a real browser at phone width (issue 32 item 5): an
 * administrator invites from the end user's page, the wearer opens the link and sees their
 * own recording and not another's, the link does not work twice, and the service worker
 * keeps the app's files only.
 */
describe.skipIf(!hasChromium)("the wearer's portal", () => {
  let d: Dashboard;
  let wearer: string;
  let own: string;
  let foreign: string;
  let link: string;
  let wearerContext: BrowserContext;

  beforeAll(async () => {
    d = await startDashboard();
    const key = d.tenant!.test;
    const tenant = { projectId: d.tenant!.project.id, mode: "test" as const };
    wearer = (await d.call("POST", "/v1/end-users", { key, body: { name: "Dr. Ana Weber", email: "ana@clinic.example" } })).body.id;
    const other = (await d.call("POST", "/v1/end-users", { key, body: { name: "Dr. Ben Ito" } })).body.id;
    own = await seedRecording(d.deps, tenant, wav(voiced(1)), { endUserId: wearer });
    foreign = await seedRecording(d.deps, tenant, wav(voiced(1)), { endUserId: other });
    // A fixture names them, so the page can be read by name (no API call renames a recording).
    const name = d.deps.db.query("UPDATE recordings SET name = ? WHERE id = ?");
    name.run("Ana's ward round", own);
    name.run("Ben's consultation", foreign);
  });
  afterAll(async () => {
    await wearerContext?.close();
    await d?.stop();
  });

  test("an administrator's Invite button gives a one-time link", async () => {
    await onPage(await d.newSignedInPage({ phone: true }), "portal-invite", async (page) => {
      await page.goto(`${d.base}/dashboard#/end-users/${wearer}`);
      await page.getByRole("button", { name: "Invite to the portal" }).click();
      const field = page.getByRole("textbox", { name: "Sign-in link" });
      await field.waitFor();
      link = await field.inputValue();
      expect(link).toStartWith(`${d.base}/me/invite#inv_`);
    });
  });

  test("at 390 px the wearer signs in with the link and sees their own recording, not another's", async () => {
    wearerContext = await d.browser.newContext(PHONE);
    await onPage(await wearerContext.newPage(), "portal-sign-in", async (page) => {
      await page.goto(link);
      await page.getByRole("heading", { name: "My recordings" }).waitFor();
      // The token left the address bar with the sign-in.
      expect(page.url()).not.toContain("inv_");
      const list = page.getByRole("list", { name: "My recordings" });
      await list.getByRole("link", { name: "Ana's ward round" }).waitFor();
      expect(await list.getByRole("link").count()).toBe(1);
      expect(await page.getByText("Ben's consultation").count()).toBe(0);
      expect(await page.locator(`a[href*="${foreign}"]`).count()).toBe(0);
      expect(await fitsTheScreen(page)).toBe(true);

      // From the keyboard: the recording's link opens it.
      await list.getByRole("link", { name: "Ana's ward round" }).focus();
      await page.keyboard.press("Enter");
      await page.getByRole("heading", { name: /Ana's ward round/ }).waitFor();
      await page.getByRole("link", { name: "Audio" }).waitFor();
      expect(await page.getByRole("button", { name: "Delete this recording" }).count()).toBe(0);
      // Parts a recording lacks (a transcript, the Delete section) are left out, not written as "null".
      expect(await page.evaluate(() => Array.from(document.getElementById("view")!.childNodes).filter((n) => n.nodeType !== Node.ELEMENT_NODE).length)).toBe(0);
      expect(await fitsTheScreen(page)).toBe(true);

      // Another's recording by its address is not found, as an unknown one.
      await page.goto(`${d.base}/me#/r/${foreign}`);
      await page.getByRole("alert").getByText(`No recording ${foreign}.`).waitFor();
    });
  });

  test("the link cannot be used twice: a clear page, and no session", async () => {
    const context = await d.browser.newContext(PHONE);
    try {
      await onPage(await context.newPage(), "portal-reused", async (page) => {
        await page.goto(link);
        await page.getByRole("heading", { name: "This link cannot sign you in" }).waitFor();
        await page.getByRole("alert").getByText("already been used").waitFor();
        expect((await context.cookies()).map((c) => c.name)).not.toContain("parley_me");
        await page.goto(`${d.base}/me`);
        await page.getByRole("heading", { name: "Signed out" }).waitFor();
      });
    } finally {
      await context.close();
    }
  });

  test("the service worker keeps the app's files and never a /v1 or session answer", async () => {
    await onPage(await wearerContext.newPage(), "portal-service-worker", async (page) => {
      await page.goto(`${d.base}/me`);
      await page.evaluate(() => navigator.serviceWorker.ready.then(() => undefined));
      // Now under the worker: every request of these pages passes it.
      await page.reload();
      await page.getByRole("list", { name: "My recordings" }).getByRole("link", { name: "Ana's ward round" }).click();
      await page.getByRole("link", { name: "Audio" }).waitFor();
      await page.evaluate(() => fetch(`/v1/recordings`, { headers: { "x-parley-portal": "1" } }).then((r) => r.json()));
      const cached = await page.evaluate(async () => {
        const urls: string[] = [];
        for (const name of await caches.keys()) for (const request of await (await caches.open(name)).keys()) urls.push(new URL(request.url).pathname);
        return urls;
      });
      expect(cached).toContain("/me/app.js");
      expect(cached).toContain("/me/recording.js");
      expect(cached.filter((path) => path.startsWith("/v1/") || path.startsWith("/me/api/"))).toEqual([]);
      expect(await page.evaluate(() => navigator.serviceWorker.controller !== null)).toBe(true);
    });
  });

  test("where allow_wearer_delete is on, the wearer deletes their recording after confirming", async () => {
    await d.call("PUT", `/v1/config/end-users/${wearer}`, { key: d.tenant!.test, body: { allow_wearer_delete: true } });
    await onPage(await wearerContext.newPage(), "portal-delete", async (page) => {
      await page.goto(`${d.base}/me#/r/${own}`);
      await page.getByRole("button", { name: "Delete this recording" }).click();
      await page.getByRole("dialog").getByRole("button", { name: "Delete", exact: true }).click();
      await page.getByText("No recordings yet.").waitFor();
      expect((await d.call("GET", `/v1/recordings/${own}`, { key: d.tenant!.test })).status).toBe(404);
    });
  });
});

/** Whether nothing is wider than the phone's screen (no sideways scrolling). */
function fitsTheScreen(page: Page): Promise<boolean> {
  return page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth);
}
