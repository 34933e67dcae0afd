import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { type Browser, chromium } from "playwright-core";
import { makeTenant, makeTestApp } from "../helpers";

const CHROMIUM = "/usr/bin/chromium";
const hasChromium = existsSync(CHROMIUM);
if (!hasChromium) console.warn("dashboard browser tests skipped: no /usr/bin/chromium (.ci/run installs it)");

describe.skipIf(!hasChromium)("dashboard in a real browser", () => {
  let browser: Browser;
  let base: string;
  let acme: ReturnType<typeof makeTenant>;
  let server: { stop(): void };
  let t: Awaited<ReturnType<typeof makeTestApp>>;

  beforeAll(async () => {
    t = await makeTestApp();
    acme = makeTenant(t.deps, "acme");
    await t.call("POST", "/v1/end-users", { key: acme.test, body: { name: "Ada Lovelace", external_id: "patient-1" } });
    const listening = t.app.listen({ port: 0, hostname: "127.0.0.1" });
    server = { stop: () => listening.stop() };
    base = `http://127.0.0.1:${listening.server!.port}`;
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
    });
  });

  afterAll(async () => {
    await browser?.close();
    server?.stop();
  });

  test("a wrong key is refused; the right key shows the project's end users and nothing of other modes", async () => {
    const page = await browser.newPage();
    const failedRequests: string[] = [];
    page.on("requestfailed", (r) => failedRequests.push(r.url()));
    await page.goto(`${base}/`);
    await page.fill("input[name=key]", "sk_test_notarealkey");
    await page.click("button[type=submit]");
    await page.waitForFunction(() => document.querySelector("#sign-in-error")?.textContent);
    expect(await page.textContent("#sign-in-error")).toContain("not valid");

    expect(await page.isVisible("#nav")).toBe(false);
    await page.fill("input[name=key]", acme.test);
    await page.click("button[type=submit]");
    await page.click("a[href='#/end-users']");
    expect(await page.isVisible("#sign-in")).toBe(false);
    await page.waitForSelector("td");
    expect(await page.textContent("#view")).toContain("Ada Lovelace");
    expect(await page.textContent("#who")).toContain(acme.test.slice(-4));
    expect(await page.textContent("#who")).not.toContain(acme.test);

    // The live key sees the other data set: none of the test-mode end users.
    await page.click("#sign-out");
    await page.fill("input[name=key]", acme.live);
    await page.click("button[type=submit]");
    await page.click("a[href='#/end-users']");
    await page.waitForSelector("#view h2:has-text('End users')");
    expect(await page.textContent("#view")).toContain("Nothing here yet");
    expect(failedRequests).toEqual([]);
    await page.close();
  });

  test("a webhook endpoint disabled after 3 days of failures says so", async () => {
    const created = await fetch(`${base}/v1/webhooks`, {
      method: "POST",
      headers: { authorization: `Bearer ${acme.test}`, "content-type": "application/json" },
      body: JSON.stringify({ url: "https://receiver.clinic.lan/parley", events: ["*"] }),
    }).then((r) => r.json());
    expect(created.id).toMatch(/^wh_/);
    t.deps.db.query("UPDATE webhook_endpoints SET disabled_at = ?, failing_since = ? WHERE id = ?").run("2026-01-10T00:00:00.000Z", "2026-01-07T00:00:00.000Z", created.id);
    const page = await browser.newPage();
    await page.goto(`${base}/dashboard#/webhooks`);
    await page.fill("input[name=key]", acme.test);
    await page.click("button[type=submit]");
    await page.waitForSelector("#view h2:has-text('Webhooks')");
    const text = await page.textContent("#view");
    expect(text).toContain("receiver.clinic.lan");
    expect(text).toContain("disabled");
    expect(text).toContain("after 3 days of failures");
    await page.close();
  });
  // The notice reads GET /v1/health (public, nothing secret); the browser is the client under
  // test here, so each case answers that request itself.
  const health = (models: Record<string, { model: string; installed: boolean }>) => ({ status: 200, contentType: "application/json", body: JSON.stringify({ models }) });

  test("missing models are named first thing, with the commands that install them, before signing in", async () => {
    const page = await browser.newPage();
    await page.route("**/v1/health", (route) =>
      route.fulfill(health({ transcriber: { model: "whisper-base.en", installed: false }, llm: { model: "qwen2.5-1.5b-instruct-q4", installed: true }, embedder: { model: "<b>all-minilm-l6-v2</b>", installed: false } })),
    );
    await page.goto(`${base}/dashboard`);
    const notice = page.getByRole("status", { name: "Models not installed" });
    await notice.waitFor();
    const text = await notice.textContent();
    expect(text).toContain("parley models pull whisper-base.en (transcriber)");
    expect(text).toContain("parley models pull <b>all-minilm-l6-v2</b> (embedder)");
    expect(text).toContain("parley models import PATH");
    expect(text).not.toContain("qwen");
    expect(await page.isVisible("#sign-in")).toBe(true);
    await page.close();
  });

  test("no notice when every model is installed", async () => {
    const page = await browser.newPage();
    let asked = false;
    await page.route("**/v1/health", (route) => {
      asked = true;
      return route.fulfill(health({ transcriber: { model: "whisper-base.en", installed: true } }));
    });
    await page.goto(`${base}/dashboard`);
    await page.waitForSelector("#sign-in:not([hidden])");
    await page.waitForFunction(() => performance.getEntriesByType("resource").some((e) => e.name.endsWith("/v1/health")));
    expect(asked).toBe(true);
    expect(await page.isVisible("#models-notice")).toBe(false);
    await page.close();
  });
});
