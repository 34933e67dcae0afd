import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import { disclosureEngines, seedPatients } from "../modules/disclosures-fixtures";
import { type OidcTestProvider, startOidcProvider } from "../support/oidc-provider";
import { openFromNav } from "./pages-support";
import { type Dashboard, hasChromium, onPage, startDashboard } from "./support";

const ROLE_MAP = "parley-owners=owner,parley-admins=admin,parley-compliance=compliance,parley-support=viewer";
const USERS = [
  { login: "olga", email: "olga@clinic.example", groups: ["staff", "parley-compliance"] },
  { login: "adam", email: "adam@clinic.example", groups: ["parley-admins"] },
];
const REASON = "Subpoena 2026-114 for the patient's visits";
const PHONE = { viewport: { width: 390, height: 844 }, ignoreHTTPSErrors: true };

/** A port free now, for a dashboard whose PARLEY_PUBLIC_URL (and so its redirect URI) must be known before it listens. */
function freePort(): number {
  const probe = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
  const { port } = probe;
  probe.stop(true);
  return port!;
}

/**
 * Issue 32's "Done when", end to end in one Chromium journey on one server that has single
 * sign-on configured against a real OpenID provider: SSO, roles, break-glass, the accounting
 * of disclosures and the wearer's portal were built apart, and this is where they meet. The
 * steps build on each other (the admin's invite is the wearer's way in), so they run in order.
 * The route-by-role matrix is test/http/role-matrix.test.ts.
 */
describe.skipIf(!hasChromium)("issue 32 end to end: SSO people, break-glass, disclosures and the wearer's portal", () => {
  let idp: OidcTestProvider;
  let d: Dashboard;
  let patient: Awaited<ReturnType<typeof seedPatients>>["patient"];
  let other: Awaited<ReturnType<typeof seedPatients>>["other"];
  let inviteLink = "";

  beforeAll(async () => {
    const port = freePort();
    const publicUrl = `http://127.0.0.1:${port}`;
    idp = await startOidcProvider(USERS, [`${publicUrl}/dashboard/api/sso/callback`]);
    d = await startDashboard({ port, engines: disclosureEngines(), env: { PARLEY_PUBLIC_URL: publicUrl, ...idp.env(ROLE_MAP) } });
    ({ patient, other } = await seedPatients(d, d.tenant!));
    // Names to read the portal by (no API call renames a recording).
    const name = d.deps.db.query("UPDATE recordings SET name = ? WHERE id = ?");
    name.run("Patient's first visit", patient.recording);
    name.run("Someone else's visit", other.recording);
  });
  afterAll(async () => {
    await d?.stop();
    await idp?.stop();
  });

  /** From the sign-in page through the provider's, as a person does; waits for the dashboard's shell. */
  async function signInWithSso(page: Page, login: string) {
    await page.goto(`${d.base}/dashboard`);
    await page.getByRole("button", { name: "Sign in with SSO" }).click();
    await page.getByRole("heading", { name: "Test identity provider" }).waitFor();
    await page.getByLabel("User name").fill(login);
    await page.getByRole("button", { name: "Continue" }).click();
    await page.getByRole("navigation", { name: "Main" }).waitFor();
  }

  test("an SSO compliance officer reads the audit log, is refused a transcript, opens break-glass, reads it, and the read shows on the patient's disclosures", async () => {
    await onPage(await d.browser.newPage(), "journey-compliance", async (page) => {
      await signInWithSso(page, "olga");
      await page.locator("#who").filter({ hasText: "olga@clinic.example" }).waitFor();

      // The audit log is hers to read (the project's first key was made before her).
      await openFromNav(page, "Compliance");
      const audit = page.getByRole("region", { name: "Audit log" }).getByRole("row");
      await audit.filter({ hasText: "key.create" }).first().waitFor();
      // So is her own single sign-on, which belongs to no project: the organization's rows.
      const signIns = page.getByRole("region", { name: "Sign-ins and accounts" }).getByRole("row");
      await signIns.filter({ hasText: "admin.sign_in" }).filter({ hasText: "olga@clinic.example" }).first().waitFor();

      await page.goto(`${d.base}/dashboard#/recordings/${patient.recording}`);
      await page.getByRole("alert").filter({ hasText: "break-glass" }).waitFor();
      expect(await page.getByText("headache").count()).toBe(0);

      await openFromNav(page, "Compliance");
      const section = page.getByRole("region", { name: "Break-glass" });
      await section.getByText("Open break-glass for an end user").click();
      await section.getByLabel("End user", { exact: true }).selectOption(patient.endUser);
      await section.getByLabel("Reason").fill(REASON);
      await section.getByRole("button", { name: "Open break-glass" }).click();
      const grant = section.getByRole("row").filter({ hasText: patient.endUser });
      await grant.filter({ hasText: "open" }).waitFor();
      expect(await grant.textContent()).toContain("olga@clinic.example");

      await page.goto(`${d.base}/dashboard#/recordings/${patient.recording}`);
      await page.getByText("headache").first().waitFor();
      // Her read is in the audit log under her name.
      await openFromNav(page, "Compliance");
      await audit.filter({ hasText: "transcription.read" }).filter({ hasText: "olga@clinic.example" }).first().waitFor();

      // The patient's accounting of disclosures names her read, with her reason.
      await page.goto(`${d.base}/dashboard#/disclosures/${patient.endUser}`);
      await page.getByRole("heading", { name: "Disclosures of Patient", level: 1 }).waitFor();
      const read = page.getByRole("table").getByRole("row").filter({ hasText: REASON });
      await read.first().waitFor();
      expect(await read.first().textContent()).toContain("olga@clinic.example");
      // Someone else's report stays empty: break-glass opened one person only.
      await page.goto(`${d.base}/dashboard#/disclosures/${other.endUser}`);
      await page.getByRole("heading", { name: "Disclosures of Someone else", level: 1 }).waitFor();
      await page.getByText("No one has read or exported this end user's content.").waitFor();
    });
  });

  test("an SSO admin adds an end user, issues them a key, and invites the patient to the portal", async () => {
    await onPage(await d.browser.newPage(), "journey-admin", async (page) => {
      await signInWithSso(page, "adam");
      await openFromNav(page, "End users");
      await page.getByText("Add an end user").click();
      await page.getByLabel("Name", { exact: true }).fill("Ada Patient");
      await page.getByLabel("External id", { exact: true }).fill("ada-1");
      await page.getByRole("button", { name: "Add end user" }).click();
      await page.getByRole("heading", { name: "Ada Patient", level: 1 }).waitFor();
      const ada = d.deps.db.query<{ id: string }, []>("SELECT id FROM end_users WHERE external_id = 'ada-1'").get()!;

      // An end-user key confined to her, that works for her and only her.
      await openFromNav(page, "Keys");
      await page.getByLabel(/^End user \(/).check();
      await page.getByLabel("End user", { exact: true }).selectOption(ada.id);
      await page.getByRole("button", { name: "Create key" }).click();
      const key = (await page.getByLabel("New key", { exact: true }).textContent())!;
      const list = await fetch(`${d.base}/v1/end-users`, { headers: { authorization: `Bearer ${key}` } }).then((r) => r.json());
      expect(list.data.map((u: { id: string }) => u.id)).toEqual([ada.id]);

      await page.goto(`${d.base}/dashboard#/end-users/${patient.endUser}`);
      await page.getByRole("button", { name: "Invite to the portal" }).click();
      const field = page.getByRole("textbox", { name: "Sign-in link" });
      await field.waitFor();
      inviteLink = await field.inputValue();
      expect(inviteLink).toContain("/me/invite#inv_");
    });
  });

  test("at 390 px the patient signs in with the admin's invite link and sees their own recording and not another's", async () => {
    expect(inviteLink).not.toBe("");
    const context = await d.browser.newContext(PHONE);
    try {
      await onPage(await context.newPage(), "journey-wearer", async (page) => {
        await page.goto(inviteLink);
        await page.getByRole("heading", { name: "My recordings" }).waitFor();
        const list = page.getByRole("list", { name: "My recordings" });
        await list.getByRole("link", { name: "Patient's first visit" }).waitFor();
        expect(await list.getByRole("link").count()).toBe(1);
        expect(await page.getByText("Someone else's visit").count()).toBe(0);
        expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);

        await list.getByRole("link", { name: "Patient's first visit" }).click();
        await page.getByText("headache").first().waitFor();
        await page.goto(`${d.base}/me#/r/${other.recording}`);
        await page.getByRole("alert").getByText(`No recording ${other.recording}.`).waitFor();
      });
    } finally {
      await context.close();
    }
  });
});
