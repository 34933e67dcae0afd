import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Secret, TOTP } from "otpauth";
import type { Page } from "playwright-core";
import { type Dashboard, hasChromium, onPage, startDashboard } from "./support";

/** The code an authenticator app shows for `secret` at the app's (fake) clock. */
const codeAt = (d: Dashboard, secret: string) =>
  new TOTP({ secret: Secret.fromBase32(secret), algorithm: "SHA1", digits: 6, period: 30 }).generate({ timestamp: d.clock.now().getTime() });

async function fillPassword(page: Page, d: Dashboard) {
  await page.goto(`${d.base}/dashboard`);
  await page.getByLabel("Email").fill(d.admin.email);
  await page.getByLabel("Password").fill(d.admin.password);
  await page.getByRole("button", { name: "Sign in" }).click();
}

/** Goes through the set-up on screen: reads the secret shown, confirms with its code, returns the secret and recovery codes. */
async function setUp(page: Page, d: Dashboard) {
  await page.getByRole("button", { name: "Start set-up" }).click();
  await page.getByRole("img", { name: "QR code of the secret" }).waitFor();
  const secret = (await page.getByLabel("Secret").textContent())!.trim();
  expect(secret).toMatch(/^[A-Z2-7]{32}$/);
  // The QR code is a real image, drawn. (Shown is not drawn yet: an image decodes after it is in the page,
  // so ask it to decode, which fails for an image that cannot be drawn.)
  const drawn = await page.getByRole("img", { name: "QR code of the secret" }).evaluate((img: HTMLImageElement) =>
    img.decode().then(
      () => img.naturalWidth > 0,
      () => false,
    ),
  );
  expect(drawn).toBe(true);
  await page.getByLabel("Code from your app").fill("000000");
  await page.getByRole("button", { name: "Confirm" }).click();
  await page.getByText("That code is wrong").waitFor();
  await page.getByLabel("Code from your app").fill(codeAt(d, secret));
  await page.getByRole("button", { name: "Confirm" }).click();
  const list = page.getByRole("list", { name: "Recovery codes" });
  await list.waitFor();
  const codes = (await list.getByRole("listitem").allTextContents()).map((c) => c.trim());
  expect(codes).toHaveLength(10);
  await page.getByRole("button", { name: "Done" }).click();
  return { secret, codes };
}

async function signOut(page: Page) {
  await page.getByRole("button", { name: "Sign out" }).click();
  await page.getByRole("button", { name: "Sign in" }).waitFor();
}

describe.skipIf(!hasChromium)("second factor in a real browser", () => {
  let d: Dashboard;
  beforeAll(async () => {
    d = await startDashboard();
  });
  afterAll(() => d?.stop());

  test("set up on the Account page, then sign in with password and a code from the app", async () => {
    const page = await d.browser.newPage({ ignoreHTTPSErrors: true });
    await onPage(page, "second-factor-account", async () => {
      await fillPassword(page, d);
      await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Account" }).click();
      await page.getByText("Second factor: Off.").waitFor();
      const { secret } = await setUp(page, d);
      await page.getByText("Second factor: On").waitFor();
      expect(await page.getByLabel("Secret").count()).toBe(0);
      await signOut(page);

      // The code of the set-up's step is spent: the app's next one signs in.
      d.clock.advance(30_000);
      await fillPassword(page, d);
      await page.getByRole("heading", { name: "Second factor" }).waitFor();
      expect(await page.getByRole("navigation", { name: "Main" }).isVisible()).toBe(false);
      await page.getByLabel("Code").fill("123456");
      await page.getByRole("button", { name: "Verify" }).click();
      await page.getByRole("alert").filter({ hasText: "The code is wrong" }).waitFor();
      await page.getByLabel("Code").fill(codeAt(d, secret));
      await page.getByRole("button", { name: "Verify" }).click();
      await page.getByRole("navigation", { name: "Main" }).waitFor();
      await signOut(page);
    });
  });
});

describe.skipIf(!hasChromium)("PARLEY_REQUIRE_MFA=1 in a real browser", () => {
  let d: Dashboard;
  beforeAll(async () => {
    d = await startDashboard({ env: { PARLEY_REQUIRE_MFA: "1" } });
  });
  afterAll(() => d?.stop());

  test("an account without a second factor sees only its set-up after the password; a recovery code then signs in once", async () => {
    const page = await d.browser.newPage({ ignoreHTTPSErrors: true });
    await onPage(page, "second-factor-required", async () => {
      await fillPassword(page, d);
      await page.getByText("This appliance requires a second factor").waitFor();
      expect(await page.getByRole("navigation", { name: "Main" }).isVisible()).toBe(false);
      const { codes } = await setUp(page, d);
      await page.getByRole("navigation", { name: "Main" }).waitFor();
      await signOut(page);

      await fillPassword(page, d);
      await page.getByLabel("Code").fill(codes[0]!);
      await page.getByRole("button", { name: "Verify" }).click();
      await page.getByRole("navigation", { name: "Main" }).waitFor();
      await signOut(page);

      await fillPassword(page, d);
      await page.getByLabel("Code").fill(codes[0]!);
      await page.getByRole("button", { name: "Verify" }).click();
      await page.getByRole("alert").filter({ hasText: "The code is wrong or was used already" }).waitFor();
      expect(await page.getByRole("navigation", { name: "Main" }).isVisible()).toBe(false);
    });
  });
});

describe.skipIf(!hasChromium)("the Account page before the first project", () => {
  let d: Dashboard;
  beforeAll(async () => {
    d = await startDashboard({ project: null });
  });
  afterAll(() => d?.stop());

  test("is reachable: a second factor is the administrator's own, in no project", async () => {
    const page = await d.browser.newPage({ ignoreHTTPSErrors: true });
    await onPage(page, "second-factor-no-project", async () => {
      await fillPassword(page, d);
      await page.getByRole("heading", { name: "Create a project" }).waitFor();
      await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Account" }).click();
      await page.getByRole("button", { name: "Start set-up" }).waitFor();
      expect(await page.getByRole("heading", { name: "Create a project" }).count()).toBe(0);
    });
  });
});
