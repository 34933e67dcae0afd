import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { visit } from "./pages-support";
import { type Dashboard, hasChromium, onPage, startDashboard } from "./support";

/** Vocabulary in a real browser (issue 25 item 3): the project's terms on End users, an end user's on their page. */
describe.skipIf(!hasChromium)("vocabulary in the dashboard", () => {
  let d: Dashboard;

  beforeAll(async () => {
    d = await startDashboard();
  });
  afterAll(() => d?.stop());

  test("the project's and an end user's terms are edited on their pages, nearest first; a bad term is named beside the field", async () => {
    const key = d.tenant!.test;
    await d.call("PUT", "/v1/config/project", { key, body: { auto_summarize: false } });
    const user = (await d.call("POST", "/v1/end-users", { key, body: { name: "Dr Ada Quill" } })).body;
    await onPage(await d.newSignedInPage(), "vocabulary", async (page) => {
      await visit(page, `${d.base}/dashboard#/end-users`, "End users");
      await page.getByText("Vocabulary", { exact: true }).click();
      await page.getByLabel("Everyone's terms in this project").fill("Metformin\n  Acme Holdings \n\n");
      await page.getByRole("button", { name: "Save vocabulary" }).click();
      // Saved and shown again, trimmed: the panel opens by itself once the level has terms. (The panel
      // is open already from the click, so only the re-rendered value says the save is done.)
      await page.waitForFunction(() => document.querySelector<HTMLTextAreaElement>("details[open] textarea")?.value === "Metformin\nAcme Holdings");
      const project = (await d.call("GET", "/v1/config/project", { key })).body;
      expect(project.overrides).toMatchObject({ vocabulary: ["Metformin", "Acme Holdings"], auto_summarize: false });

      await visit(page, `${d.base}/dashboard#/end-users/${user.id}`, "Dr Ada Quill");
      await page.getByText("Vocabulary", { exact: true }).click();
      await page.getByText("Also applied: Metformin, Acme Holdings.").waitFor();
      await page.getByLabel("Their terms").fill("Quill\nmetformin");
      await page.getByRole("button", { name: "Save vocabulary" }).click();
      await page.getByText("Also applied: Acme Holdings.").waitFor();
      const theirs = (await d.call("GET", `/v1/config/end-users/${user.id}`, { key })).body;
      expect(theirs.effective.vocabulary).toEqual(["Quill", "metformin", "Acme Holdings"]);

      await page.getByLabel("Their terms").fill(`Quill\n${"x".repeat(101)}`);
      await page.getByRole("button", { name: "Save vocabulary" }).click();
      await page.locator("[data-param=vocabulary] .field-error").filter({ hasText: /./ }).waitFor();
      expect((await d.call("GET", `/v1/config/end-users/${user.id}`, { key })).body.overrides.vocabulary).toEqual(["Quill", "metformin"]);
    });
  });
});
