import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { systemClock } from "../../src/clock";
import { HashingTestEmbedder } from "../../src/engines/embedder.test-double";
import { makeTempDir } from "../helpers";
import { BUDGET, seedTranscript } from "../modules/search-corpus";
import { visit } from "./pages-support";
import { type Dashboard, hasChromium, onPage, startDashboard } from "./support";

const CORRECTED = "The launch date moves to Zanzibar because the vendor is late.";

/**
 * Correcting a transcript in the dashboard (issue 25): in place, saved as revisions, shown in
 * search, Ask and the PDF export; undo steps back through them; the original stays readable.
 */
describe.skipIf(!hasChromium)("transcript corrections in the dashboard", () => {
  let d: Dashboard;
  let recordingId: string;
  let transcriptionId: string;

  beforeAll(async () => {
    d = await startDashboard({ clock: systemClock, engines: { embedder: new HashingTestEmbedder() }, env: { PARLEY_ASK_PROVIDER: "extractive" } });
    const key = d.tenant!.test;
    const eu = (await d.call("POST", "/v1/end-users", { key, body: { name: "Ada Lovelace" } })).body;
    const tenant = { projectId: d.tenant!.project.id, mode: "test" as const };
    ({ recordingId, transcriptionId } = seedTranscript(d.deps, tenant, {
      endUserId: eu.id,
      recordedAt: "2026-01-10T09:00:00.000Z",
      lines: BUDGET,
      name: "Planning call",
    }));
    await d.deps.queue.drain();
  });
  afterAll(() => d?.stop());

  const key = () => d.tenant!.test;

  test("edit a segment's words and a voice's name in place, undo twice; search, Ask and the PDF read the correction, the original stays", async () => {
    await onPage(await d.newSignedInPage(), "corrections", async (page) => {
      await visit(page, `${d.base}/dashboard#/recordings/${recordingId}`, "Planning call");
      await page.getByRole("button", { name: "Edit transcript" }).click();
      const words = page.getByLabel("Words of segment 4", { exact: true });
      expect(await words.inputValue()).toBe(BUDGET[3]![3]);
      await words.fill(CORRECTED);
      await words.press("Tab");
      await page.getByRole("status").filter({ hasText: "Saved as revision 1." }).waitFor();
      // The field after it keeps the focus across the re-render.
      expect(await page.evaluate(() => document.activeElement?.getAttribute("aria-label"))).toBe("Speaker of segment 5");

      await d.deps.queue.drain();
      const found = await d.call("POST", "/v1/recordings/search", {
        key: key(),
        body: { query: "Zanzibar", end_user_id: (await d.call("GET", `/v1/recordings/${recordingId}`, { key: key() })).body.end_user_id },
      });
      expect(found.body.results.find((r: any) => r.recording_id === recordingId)?.chunk_text).toContain("Zanzibar");
      const asked = await d.call("POST", "/v1/ask/sessions", {
        key: key(),
        body: { scope: { type: "recording", recording_id: recordingId }, initial_message: { content: "Where does the launch move?" } },
      });
      expect(asked.body.message.content).toContain("Zanzibar");
      // The PDF as the page offers it: a download over the session.
      const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("link", { name: "PDF", exact: true }).click()]);
      const file = join(makeTempDir(), "corrected.pdf");
      await download.saveAs(file);
      const text = Bun.spawnSync(["pdftotext", "-layout", file, "-"]).stdout.toString();
      expect(text).toContain("SPEAKER_2: The launch date moves to Zanzibar because the vendor is");
      const original = await d.call("GET", `/v1/transcriptions/${transcriptionId}?revision=0`, { key: key() });
      expect(original.body.segments[3].text).toBe(BUDGET[3]![3]);

      // A new name for segment 2's speaker, for the whole voice: every SPEAKER_2 segment follows.
      await page.getByLabel("A new speaker name renames that voice everywhere").check();
      const speaker = page.getByLabel("Speaker of segment 2", { exact: true });
      await speaker.fill("Dr. Weber");
      await speaker.press("Tab");
      await page.getByRole("status").filter({ hasText: "Saved as revision 2." }).waitFor();
      expect(await page.getByLabel("Speaker of segment 4", { exact: true }).inputValue()).toBe("Dr. Weber");

      // Undo steps back one correction at a time, each as a new revision.
      await page.getByRole("button", { name: "Undo" }).click();
      await page.getByRole("status").filter({ hasText: "Undone: revision 3 restores revision 1." }).waitFor();
      expect(await page.getByLabel("Speaker of segment 4", { exact: true }).inputValue()).toBe("SPEAKER_2");
      expect(await page.getByLabel("Words of segment 4", { exact: true }).inputValue()).toBe(CORRECTED);
      await page.getByRole("button", { name: "Undo" }).click();
      await page.getByRole("status").filter({ hasText: "Undone: revision 4 restores revision 0." }).waitFor();
      expect(await page.getByLabel("Words of segment 4", { exact: true }).inputValue()).toBe(BUDGET[3]![3]);
      // Nothing is left to undo: the button turns off once the editor has read the history.
      await page.getByRole("button", { name: "Undo", disabled: true }).waitFor();

      const history = (await d.call("GET", `/v1/transcriptions/${transcriptionId}/revisions`, { key: key() })).body.data;
      expect(history.map((r: any) => [r.revision, r.restored_from, r.author?.type ?? null])).toEqual([
        [4, 0, "admin"],
        [3, 1, "admin"],
        [2, null, "admin"],
        [1, null, "admin"],
        [0, null, null],
      ]);
      expect(history[3].author.email).toBe(d.admin.email);
    });
  }, 60_000);

  test("the original, before corrections, is one tick away", async () => {
    await onPage(await d.newSignedInPage(), "corrections-original", async (page) => {
      const r = await d.call("PATCH", `/v1/transcriptions/${transcriptionId}/segments/0`, { key: key(), body: { text: "Welcome, everyone." } });
      expect(r.status).toBe(200);
      await visit(page, `${d.base}/dashboard#/recordings/${recordingId}`, "Planning call");
      const segments = page.getByRole("list", { name: "Transcript segments" });
      await segments.getByText("Welcome, everyone.").waitFor();
      await page.getByLabel("Show the original (before corrections)").check();
      await segments.getByText(BUDGET[0]![3]).waitFor();
      expect(await segments.getByText("Welcome, everyone.").count()).toBe(0);
    });
  }, 60_000);
});
