import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { getTranscription } from "../../src/modules/transcriptions/service";
import { breakGlassPrincipal, disclosureEngines, parseCsv, seedPatients } from "../modules/disclosures-fixtures";
import { type Dashboard, hasChromium, onPage, startDashboard } from "./support";

const REASON = "Complaint 42: the patient disputes the visit note";

/** An end user's accounting of disclosures in a real browser: from their page, a printable report and its CSV. */
describe.skipIf(!hasChromium)("disclosures in the dashboard", () => {
  let d: Dashboard;
  let patient: Awaited<ReturnType<typeof seedPatients>>["patient"];

  beforeAll(async () => {
    d = await startDashboard({ engines: disclosureEngines() });
    ({ patient } = await seedPatients(d, d.tenant!));
    d.clock.advance(1000);
    expect((await d.call("GET", `/v1/transcriptions/${patient.transcription}`, { key: d.tenant!.test })).status).toBe(200);
    d.clock.advance(1000);
    // A compliance officer reads under break-glass (the roles helper opens it; the trail reads it off the principal).
    await getTranscription(d.deps, breakGlassPrincipal(d.tenant!, patient.endUser, { id: "bg_1", reason: REASON }), patient.transcription);
  });
  afterAll(() => d?.stop());

  test("the end user's page opens their disclosures with the break-glass reason; the CSV downloads and parses; print shows the report alone", async () => {
    await onPage(await d.newSignedInPage(), "disclosures", async (page) => {
      await page.goto(`${d.base}/dashboard#/end-users/${patient.endUser}`);
      await page.getByRole("heading", { name: "Patient", level: 1 }).waitFor();
      await page.getByRole("link", { name: "Disclosures", exact: true }).click();
      await page.getByRole("heading", { name: "Disclosures of Patient", level: 1 }).waitFor();

      const rows = page.getByRole("table").getByRole("row");
      const breakGlass = rows.filter({ hasText: REASON });
      await breakGlass.waitFor();
      expect(await breakGlass.textContent()).toContain("compliance@clinic.example");
      // Newest first: the break-glass read, then the key's (with no reason); the header row above.
      expect(await rows.count()).toBe(3);
      expect(await rows.nth(2).textContent()).toContain("Transcript read");

      const download = page.waitForEvent("download");
      await page.getByRole("link", { name: "Download CSV" }).click();
      const file = await download;
      expect(file.suggestedFilename()).toBe(`disclosures-${patient.endUser}.csv`);
      const csv = parseCsv(readFileSync((await file.path())!, "utf8"));
      expect(csv[0]).toContain("reason");
      expect(csv.slice(1).map((r) => r[csv[0]!.indexOf("reason")])).toEqual([REASON, ""]);

      await page.emulateMedia({ media: "print" });
      expect(await page.getByRole("navigation", { name: "Main" }).isVisible()).toBe(false);
      expect(await page.getByRole("link", { name: "Download CSV" }).isVisible()).toBe(false);
      expect(await breakGlass.isVisible()).toBe(true);
    });
  });
});
