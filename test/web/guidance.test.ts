import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { openFromNav, visit } from "./pages-support";
import { type Dashboard, hasChromium, onPage, screenshot, startDashboard } from "./support";

const SAMPLE = join(import.meta.dir, "../../src/simulator/samples/team-standup.opus");

/**
 * The dashboard says what to do next where a new operator gets stuck (issue 31, items 9
 * and 10): a failed Ask, a search with nothing to search, an upload without an end user,
 * an end-user key with no end user to choose. No models are installed in the test app, so
 * the local model fails and no recording gets a transcript.
 */
describe.skipIf(!hasChromium)("guidance in the dashboard", () => {
  let d: Dashboard;
  let adaId: string;

  beforeAll(async () => {
    d = await startDashboard();
  });
  afterAll(() => d?.stop());

  test("Keys: an end-user key with no end users yet says to create one first, with the link", async () => {
    await onPage(await d.newSignedInPage({ phone: true }), "guidance-keys", async (page) => {
      await page.getByRole("heading", { name: "Keys", level: 1 }).waitFor();
      await page.getByRole("radio", { name: /End user/ }).check();
      const hint = page.getByText("This project has no end users in this mode yet");
      await hint.waitFor();
      expect(await page.getByRole("combobox", { name: "End user" }).getAttribute("aria-describedby")).toBe("no-end-users");
      await screenshot(page, "guidance-keys-no-end-users");
      await page.getByRole("link", { name: "create one on End users" }).click();
      await page.getByRole("heading", { name: "End users", level: 1 }).waitFor();
    });
    adaId = (await d.call("POST", "/v1/end-users", { key: d.tenant!.test, body: { name: "Ada Lovelace" } })).body.id;
  });

  test("a failed Ask opens its saved chat, listed under Recent chats, and says what to do here", async () => {
    await onPage(await d.newSignedInPage(), "guidance-ask-failed", async (page) => {
      await openFromNav(page, "Ask");
      await page.getByLabel("End user", { exact: true }).selectOption({ label: "Ada Lovelace" });
      await page.getByLabel("Provider", { exact: true }).selectOption({ label: "Local model (llama.cpp)" });
      await page.getByLabel("Question", { exact: true }).fill("Who chairs the budget review?");
      await page.getByRole("button", { name: "Ask", exact: true }).click();
      const notice = page.getByRole("alert").filter({ hasText: "No answer." });
      await notice.waitFor();
      expect(page.url()).toMatch(/#\/ask\?session=as_/);
      const text = (await notice.textContent())!;
      expect(text).toContain("Your question is saved in this chat.");
      expect(text).toContain("Extractive (quotes, no model)");
      expect(text).not.toContain("POST /v1");
      await page.getByRole("log", { name: "Conversation" }).getByText("Who chairs the budget review?").waitFor();
      await page.getByRole("complementary", { name: "Recent chats" }).getByRole("link", { name: "Who chairs the budget review?" }).waitFor();
      await screenshot(page, "guidance-ask-failed");

      // Asked again in the same chat with the extractive provider, the notice goes.
      await page.getByLabel("Provider", { exact: true }).selectOption({ label: "Extractive (quotes, no model)" });
      await page.getByLabel("Question", { exact: true }).fill("Who chairs it?");
      await page.getByRole("button", { name: "Ask", exact: true }).click();
      await page
        .getByRole("log", { name: "Conversation" })
        .getByText(/^Parley · extractive/)
        .waitFor();
      expect(await notice.count()).toBe(0);
    });
  });

  test("search says why nothing was found: no recordings, then none transcribed for want of the model", async () => {
    await onPage(await d.newSignedInPage(), "guidance-search", async (page) => {
      await visit(page, `${d.base}/dashboard#/search?end_user_id=${adaId}&q=budget`, "Search");
      const why = page.getByRole("region", { name: "Search results" }).getByRole("status");
      await why.getByText("Ada Lovelace has no recordings yet").waitFor();
      expect(await why.getByRole("link", { name: "Recordings" }).getAttribute("href")).toBe(`#/recordings?end_user_id=${adaId}`);

      await d.call("POST", "/v1/recordings", { key: d.tenant!.test, body: { name: "Standup", end_user_id: adaId } });
      await page.reload();
      await why.getByText("None of Ada Lovelace's recordings has a completed transcript: the transcription model is not installed").waitFor();
      await screenshot(page, "guidance-search-no-transcripts");
    });
  });

  test("the upload form warns while no end user is chosen, and not once one is", async () => {
    await onPage(await d.newSignedInPage({ phone: true }), "guidance-upload", async (page) => {
      await openFromNav(page, "Recordings");
      await page.getByText("Upload a recording").click();
      await page.getByLabel("Audio file", { exact: true }).setInputFiles(SAMPLE);
      const warning = page.getByText("Without an end user this recording belongs to no one's library: search and Ask will never reach it.");
      await warning.waitFor();
      expect(await page.getByLabel("End user", { exact: true }).last().inputValue()).toBe("");
      await screenshot(page, "guidance-upload-no-end-user");
      await page.getByLabel("End user", { exact: true }).last().selectOption({ label: "Ada Lovelace" });
      await warning.waitFor({ state: "hidden" });
    });
  });
});
