import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import { seedRecording, voiced, wav } from "../modules/pipeline-fixtures";
import { type OidcTestProvider, startOidcProvider } from "../support/oidc-provider";
import { freePort } from "../support/server-process";
import { type Dashboard, hasChromium, onPage, startDashboard } from "./support";

const PHONE = { viewport: { width: 390, height: 844 } };
const USERS = [
  { login: "ana", email: "ana@clinic.example", emailVerified: true },
  { login: "stranger", email: "stranger@clinic.example" },
];

/**
 * Single sign-on into the wearer's portal in a real browser at phone width, against a real
 * OpenID provider (decision 170): the signed-out page's button, the provider's page, and back
 * in the portal as the end user the email names; or the refusal page saying why.
 */
describe.skipIf(!hasChromium)("the wearer's portal: single sign-on at 390 px", () => {
  let idp: OidcTestProvider;
  let d: Dashboard;
  let own: string;

  beforeAll(async () => {
    const port = freePort();
    const publicUrl = `http://127.0.0.1:${port}`;
    idp = await startOidcProvider(USERS, [`${publicUrl}/me/api/sso/callback`]);
    d = await startDashboard({ port, admin: false, env: { PARLEY_PUBLIC_URL: publicUrl, ...idp.env("parley-admins=admin") } });
    const key = d.tenant!.test;
    const tenant = { projectId: d.tenant!.project.id, mode: "test" as const };
    const ana = (await d.call("POST", "/v1/end-users", { key, body: { name: "Dr. Ana Weber", email: "ana@clinic.example" } })).body.id;
    const ben = (await d.call("POST", "/v1/end-users", { key, body: { name: "Dr. Ben Ito", email: "ben@clinic.example" } })).body.id;
    own = await seedRecording(d.deps, tenant, wav(voiced(1)), { endUserId: ana });
    const foreign = await seedRecording(d.deps, tenant, wav(voiced(1)), { endUserId: ben });
    const name = d.deps.db.query("UPDATE recordings SET name = ? WHERE id = ?");
    name.run("Ana's ward round", own);
    name.run("Ben's consultation", foreign);
  });
  afterAll(async () => {
    await d?.stop();
    await idp?.stop();
  });

  /** From the portal's signed-out page through the provider's, as a wearer does. */
  async function signInWithSso(page: Page, login: string) {
    await page.goto(`${d.base}/me`);
    await page.getByRole("heading", { name: "Signed out" }).waitFor();
    await page.getByRole("link", { name: "Sign in with SSO" }).click();
    await page.getByRole("heading", { name: "Test identity provider" }).waitFor();
    await page.getByLabel("User name").fill(login);
    await page.getByRole("button", { name: "Continue" }).click();
  }

  const fitsTheScreen = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth);

  test("a wearer whose email names an end user signs in with SSO and sees their own recording, not another's", async () => {
    const context = await d.browser.newContext(PHONE);
    try {
      await onPage(await context.newPage(), "portal-sso-sign-in", async (page) => {
        await signInWithSso(page, "ana");
        const list = page.getByRole("list", { name: "My recordings" });
        await list.getByRole("link", { name: "Ana's ward round" }).waitFor();
        expect(await list.getByRole("link").count()).toBe(1);
        expect(await page.getByText("Ben's consultation").count()).toBe(0);
        await page.locator("#who").filter({ hasText: "Dr. Ana Weber" }).waitFor();
        expect(await fitsTheScreen(page)).toBe(true);
        // The portal's cookie, not the dashboard's: no admin session came of it.
        const names = (await context.cookies()).map((c) => c.name);
        expect(names).not.toContain("parley_session");
      });
    } finally {
      await context.close();
    }
  });

  test("an email that names no end user gets the refusal page saying why, and the button to try again", async () => {
    const context = await d.browser.newContext(PHONE);
    try {
      await onPage(await context.newPage(), "portal-sso-refused", async (page) => {
        await signInWithSso(page, "stranger");
        await page.getByRole("heading", { name: "Single sign-on did not sign you in" }).waitFor();
        await page.getByRole("alert").filter({ hasText: "no one here has your email address" }).waitFor();
        await page.getByRole("link", { name: "Sign in with SSO" }).waitFor();
        expect(await page.getByRole("navigation", { name: "Portal" }).isVisible()).toBe(false);
        // The reason is taken off the address, so a reload is the plain signed-out page.
        expect(new URL(page.url()).search).toBe("");
        expect(await fitsTheScreen(page)).toBe(true);
      });
    } finally {
      await context.close();
    }
  });
});
