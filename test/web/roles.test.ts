import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ScriptedLlm } from "../../src/engines/llm.test-double";
import { ScriptedTranscriber } from "../../src/engines/transcriber.test-double";
import { createAdmin } from "../../src/modules/admins/service";
import { concat, seedRecording, silence, voiced, wav } from "../modules/pipeline-fixtures";
import { openFromNav, untilReplaced } from "./pages-support";
import { type Dashboard, hasChromium, onPage, signIn, startDashboard } from "./support";

// Issue 32 in the browser (decisions 136, 137): a compliance officer sees the audit log, is
// refused a transcript with the break-glass message, opens break-glass with a reason and
// reads it; the Compliance page shows the grant open, with who and why. An owner manages
// administrators on their page; the last owner cannot be demoted.
describe.skipIf(!hasChromium)("roles and break-glass in the dashboard", () => {
  let d: Dashboard;
  const officer = { email: "officer@clinic.example", password: "correct horse battery staple" };
  beforeAll(async () => {
    d = await startDashboard({ engines: { transcriber: new ScriptedTranscriber(), llm: new ScriptedLlm() } });
    await createAdmin(d.deps.db, officer.email, officer.password, "compliance", d.clock.now());
  });
  afterAll(async () => {
    await d?.stop();
  });
  const roleOf = (email: string) => d.deps.db.query<{ role: string }, [string]>("SELECT role FROM admins WHERE email = ?").get(email)?.role;

  test("a compliance session is refused a transcript, opens break-glass with a reason, then reads it; the Compliance page shows who and why", async () => {
    const key = d.tenant!.test;
    const endUser = (await d.call("POST", "/v1/end-users", { key, body: { name: "Patient Nine" } })).body;
    const recording = await seedRecording(d.deps, { projectId: d.tenant!.project.id, mode: "test" }, wav(concat(voiced(2), silence(1), voiced(2))), {
      endUserId: endUser.id,
    });
    await d.call("POST", "/v1/transcriptions", { key, body: { recording_id: recording } });
    await d.deps.queue.drain();

    const page = await d.browser.newPage({ ignoreHTTPSErrors: true });
    await onPage(page, "roles-break-glass", async () => {
      await signIn(page, d.base, officer);
      const nav = page.getByRole("navigation", { name: "Main" });
      // What the role can never use is not offered; the server refuses it anyway.
      expect(await nav.getByRole("link", { name: "Keys", exact: true }).isHidden()).toBe(true);
      expect(await nav.getByRole("link", { name: "Administrators", exact: true }).isHidden()).toBe(true);
      await openFromNav(page, "Compliance");
      await page.getByRole("region", { name: "Audit log" }).getByRole("row").filter({ hasText: "key.create" }).first().waitFor();
      // Retention is configuration: she reads what applies, an owner or administrator changes it.
      await page.getByText("An owner or administrator changes retention.").waitFor();
      expect(await page.getByRole("button", { name: "Save retention" }).count()).toBe(0);

      await page.goto(`${d.base}/dashboard#/recordings/${recording}`);
      const refusal = page.getByRole("alert").filter({ hasText: "break-glass" });
      await refusal.waitFor();
      expect(await page.getByText("utterance").count()).toBe(0);

      // The refusal leads to break-glass with the recording's end user already chosen.
      await page.getByRole("link", { name: "Open break-glass for this end user" }).click();
      const section = page.getByRole("region", { name: "Break-glass" });
      const chosen = section.getByLabel("End user", { exact: true });
      await chosen.waitFor();
      expect(await chosen.inputValue()).toBe(endUser.id);
      await section.getByLabel("Reason").fill("Short");
      await section.getByRole("button", { name: "Open break-glass" }).click();
      await section.getByText("at least 10 characters").waitFor();
      await section.getByLabel("Reason").fill("Subpoena 2026-114 for the patient's visits");
      await section.getByRole("button", { name: "Open break-glass" }).click();
      const grant = section.getByRole("row").filter({ hasText: endUser.id });
      await grant.filter({ hasText: "open" }).waitFor();
      const shown = await grant.textContent();
      expect(shown).toContain(officer.email);
      expect(shown).toContain("Subpoena 2026-114 for the patient's visits");

      await page.goto(`${d.base}/dashboard#/recordings/${recording}`);
      await page.getByText("utterance").first().waitFor();

      // Closed again from the page: the grant says so, and the transcript is refused once more.
      await openFromNav(page, "Compliance");
      await grant.getByRole("button", { name: `Close break-glass for ${endUser.id}` }).click();
      await page.getByRole("dialog").getByRole("button", { name: "Close" }).click();
      await grant.filter({ hasText: "closed" }).waitFor();
      await page.goto(`${d.base}/dashboard#/recordings/${recording}`);
      await refusal.waitFor();
    });
  });

  test("an owner adds an administrator with a role, changes it and removes them; the last owner is refused a demotion", async () => {
    await onPage(await d.newSignedInPage(), "roles-administrators", async (page) => {
      await openFromNav(page, "Administrators");
      await page.getByText("Add an administrator").click();
      await page.getByLabel("Email").fill("desk@clinic.example");
      await page.getByLabel("Password").fill("correct horse battery staple");
      await page.getByLabel("Role", { exact: true }).selectOption("viewer");
      await page.getByRole("button", { name: "Add administrator" }).click();
      const role = page.getByLabel("Role of desk@clinic.example");
      await role.waitFor();
      expect(await role.inputValue()).toBe("viewer");

      // A change is saved, then the list is read again: the old list gone says both are done (the
      // select shows what was chosen at once, saved or not).
      await untilReplaced(page, role, async () => void (await role.selectOption("admin")));
      expect(await role.inputValue()).toBe("admin");
      expect(roleOf("desk@clinic.example")).toBe("admin");

      const mine = page.getByLabel(`Role of ${d.admin.email}`);
      await untilReplaced(page, mine, async () => void (await mine.selectOption("compliance")));
      await page.getByRole("alert").filter({ hasText: "last owner" }).waitFor();
      expect(await mine.inputValue()).toBe("owner");
      expect(roleOf(d.admin.email)).toBe("owner");

      await page.getByRole("button", { name: "Remove desk@clinic.example" }).click();
      await page.getByRole("dialog").getByRole("button", { name: "Remove" }).click();
      await page.getByLabel("Role of desk@clinic.example").waitFor({ state: "detached" });
    });
  });
});
