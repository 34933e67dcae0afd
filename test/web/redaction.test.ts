import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ScriptedTranscriber } from "../../src/engines/transcriber.test-double";
import { concat, seedRecording, silence, voiced, wav } from "../modules/pipeline-fixtures";
import { type Dashboard, hasChromium, onPage, startDashboard } from "./support";

// "Show this transcript without the identifiers", in the dashboard: the recording page's
// toggle swaps the transcript for its redacted view, and that view is read (and audited)
// as such.
const SPOKEN = " Good morning, my name is Ada Lovelace, call me at (555) 867-5309 about the pain in my knee.";

describe.skipIf(!hasChromium)("redacted transcript in the dashboard", () => {
  let d: Dashboard;
  beforeAll(async () => {
    const transcriber = new ScriptedTranscriber({ segments: (pcm) => [{ start: 0, end: pcm.length / 16_000, text: SPOKEN, confidence: 0.9 }] });
    d = await startDashboard({ engines: { transcriber } });
  });
  afterAll(async () => {
    await d?.stop();
  });

  test("Hide identifiers shows the redacted transcript, keeps the rest, and the redacted read is audited", async () => {
    const key = d.tenant!.test;
    await d.call("PUT", "/v1/config/project", { key, body: { max_speakers: 1 } });
    const rec = await seedRecording(d.deps, { projectId: d.tenant!.project.id, mode: "test" }, wav(concat(voiced(2), silence(1), voiced(2))));
    const txn = (await d.call("POST", "/v1/transcriptions", { key, body: { recording_id: rec } })).body;
    await d.deps.queue.drain();
    await onPage(await d.newSignedInPage(), "redaction", async (page) => {
      await page.goto(`${d.base}/dashboard#/recordings/${rec}`);
      const segments = page.getByRole("list", { name: "Transcript segments" });
      await segments.getByText("Ada Lovelace").waitFor();
      await page.getByLabel("Hide identifiers").check();
      await segments.getByText("[NAME]").first().waitFor();
      const text = await segments.textContent();
      expect(text).not.toContain("Lovelace");
      expect(text).not.toContain("867-5309");
      expect(text).toContain("the pain in my knee");
      // No language model here: the page says the rules alone found them.
      await page.getByRole("status").filter({ hasText: "found by the rules only" }).waitFor();
      await page.getByLabel("Hide identifiers").uncheck();
      await segments.getByText("Ada Lovelace").waitFor();
      expect(await page.getByRole("status").filter({ hasText: "found by the rules" }).count()).toBe(0);
    });
    const audit = (await d.call("GET", `/v1/audit-events?resource_id=${txn.id}`, { key })).body.data.map((e: { action: string }) => e.action);
    expect(audit.filter((a: string) => a.includes("redacted")).length).toBe(1);
  });
});
