import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type Dashboard, hasChromium, onPage, startDashboard } from "./support";

// "Keep everything of this patient for the lawsuit" and "who did what to it", from the
// dashboard: a hold placed and released in the browser stops and then allows a deletion
// through the API, and the audit log, filtered by the end user's id, shows all three with
// who did each.
describe.skipIf(!hasChromium)("compliance in the dashboard", () => {
  let d: Dashboard;
  beforeAll(async () => {
    d = await startDashboard();
  });
  afterAll(async () => {
    await d?.stop();
  });

  test("a legal hold placed in the browser blocks deletion until released; the audit log shows each step and its actor", async () => {
    const key = d.tenant!.test;
    const endUser = (await d.call("POST", "/v1/end-users", { key, body: { name: "Patient Zero", external_id: "p-0" } })).body;
    await onPage(await d.newSignedInPage(), "compliance", async (page) => {
      await page.getByRole("link", { name: "Compliance", exact: true }).click();
      await page.getByText("Place a legal hold").click();
      await page.getByLabel("Matter").fill("Doe v. Clinic");
      await page.getByLabel("Covers").selectOption("end_user_id");
      await page.getByLabel("Id", { exact: true }).fill(endUser.id);
      await page.getByRole("button", { name: "Place hold" }).click();
      const row = page.getByRole("row").filter({ hasText: "Doe v. Clinic" });
      await row.filter({ hasText: "active" }).waitFor();

      const refused = await d.call("DELETE", `/v1/end-users/${endUser.id}`, { key });
      expect(refused.status).toBe(409);
      expect(refused.body.error.code).toBe("legal_hold_active");

      await row.getByRole("button", { name: "Release Doe v. Clinic" }).click();
      await page.getByRole("dialog").getByRole("button", { name: "Release" }).click();
      await row.filter({ hasText: "released" }).waitFor();
      expect((await d.call("DELETE", `/v1/end-users/${endUser.id}`, { key })).status).toBeLessThan(300);

      await page.getByLabel("Resource id").fill(endUser.id);
      await page.getByRole("button", { name: "Filter" }).click();
      const log = page.getByRole("region", { name: "Audit log" });
      for (const action of ["legal_hold.create", "legal_hold.release", "end_user.delete"]) await log.getByRole("row").filter({ hasText: action }).waitFor();
      expect(await log.getByRole("row").filter({ hasText: "legal_hold.create" }).textContent()).toContain(d.admin.email);
      // Filtered: nothing about other resources.
      expect(await log.getByRole("row").filter({ hasText: "key.create" }).count()).toBe(0);
    });
  });
});
