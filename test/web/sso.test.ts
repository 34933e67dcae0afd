import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import { type OidcTestProvider, startOidcProvider } from "../support/oidc-provider";
import { type Dashboard, hasChromium, onPage, startDashboard } from "./support";

const ROLE_MAP = "parley-owners=owner,parley-admins=admin,parley-compliance=compliance,parley-support=viewer";
const USERS = [
  { login: "olga", email: "olga@clinic.example", groups: ["staff", "parley-compliance"] },
  { login: "adam", email: "adam@clinic.example", groups: ["parley-admins"] },
  { login: "nina", email: "nina@clinic.example", groups: ["staff"] },
];

/** A port free now, for a dashboard whose PARLEY_PUBLIC_URL (and so its redirect URI) must be known before it listens. */
function freePort(): number {
  const probe = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
  const { port } = probe;
  probe.stop(true);
  return port!;
}

describe.skipIf(!hasChromium)("single sign-on in a real browser, against a real OpenID provider", () => {
  let idp: OidcTestProvider;
  let d: Dashboard;

  beforeAll(async () => {
    const port = freePort();
    const publicUrl = `http://127.0.0.1:${port}`;
    idp = await startOidcProvider(USERS, [`${publicUrl}/dashboard/api/sso/callback`]);
    d = await startDashboard({ port, env: { PARLEY_PUBLIC_URL: publicUrl, ...idp.env(ROLE_MAP) } });
  });
  afterAll(async () => {
    await d?.stop();
    await idp?.stop();
  });

  /** From the sign-in page through the provider's, as a person does: the button, then their user name there. */
  async function signInWithSso(page: Page, login: string) {
    await page.goto(`${d.base}/dashboard`);
    // The password form stays: SSO is one more way in.
    await page.getByLabel("Password").waitFor();
    await page.getByRole("button", { name: "Sign in with SSO" }).click();
    await page.getByRole("heading", { name: "Test identity provider" }).waitFor();
    await page.getByLabel("User name").fill(login);
    await page.getByRole("button", { name: "Continue" }).click();
  }

  const roleOf = (email: string) => d.deps.db.query<{ role: string }, [string]>("SELECT role FROM admins WHERE email = ?").get(email)?.role;

  test("a compliance officer signs in with SSO and lands in the dashboard with the role compliance", async () => {
    await onPage(await d.browser.newPage(), "sso-compliance", async (page) => {
      await signInWithSso(page, "olga");
      await page.getByRole("navigation", { name: "Main" }).waitFor();
      await page.locator("#who").filter({ hasText: "olga@clinic.example" }).waitFor();
      expect(roleOf("olga@clinic.example")).toBe("compliance");
    });
  });

  test("an SSO admin signs in and adds an end user", async () => {
    await onPage(await d.browser.newPage(), "sso-admin", async (page) => {
      await signInWithSso(page, "adam");
      await page.getByRole("navigation", { name: "Main" }).waitFor();
      expect(roleOf("adam@clinic.example")).toBe("admin");
      await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "End users" }).click();
      await page.getByText("Add an end user").click();
      await page.getByLabel("Name", { exact: true }).fill("Ada Patient");
      await page.getByLabel("External id", { exact: true }).fill("ada-1");
      await page.getByRole("button", { name: "Add end user" }).click();
      await page.getByRole("heading", { name: "Ada Patient", level: 1 }).waitFor();
    });
    const created = d.deps.db.query<{ n: number }, []>("SELECT count(*) AS n FROM end_users WHERE external_id = 'ada-1'").get()!;
    expect(created.n).toBe(1);
  });

  test("a person in no mapped group sees the refusal page saying why, and no dashboard", async () => {
    await onPage(await d.browser.newPage(), "sso-no-role", async (page) => {
      await signInWithSso(page, "nina");
      await page.getByRole("heading", { name: "Single sign-on refused" }).waitFor();
      await page.getByRole("alert").filter({ hasText: "none of your groups gives a role" }).waitFor();
      expect(await page.getByRole("navigation", { name: "Main" }).isVisible()).toBe(false);
      // The reason is taken off the address, so a reload is the plain sign-in page.
      expect(new URL(page.url()).search).toBe("");
      await page.getByRole("link", { name: "Back to sign in" }).click();
      await page.getByRole("button", { name: "Sign in with SSO" }).waitFor();
    });
    expect(roleOf("nina@clinic.example")).toBeUndefined();
  });
});
