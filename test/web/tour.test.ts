import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import { systemClock } from "../../src/clock";
import { HashingTestEmbedder } from "../../src/engines/embedder.test-double";
import { ScriptedLlm } from "../../src/engines/llm.test-double";
import { ScriptedTranscriber } from "../../src/engines/transcriber.test-double";
import { seedRecording, voicedBurst, wav } from "../modules/pipeline-fixtures";
import { type Dashboard, hasChromium, onPage, screenshot, signIn, startDashboard } from "./support";

const LINES = [
  "Good morning, let us go over the week before the clinic opens.",
  "The budget review moves to Friday; Grace sends the numbers by Thursday noon.",
  "Patient intake forms need the new consent paragraph before we print them.",
  "Action: Ada updates the rota and shares it with the night team.",
];

/**
 * Every page of the dashboard at 1280 and 390 px, on a project with real-looking data
 * (an end user, a bound device, a transcribed and summarised recording, a chat): the page
 * must fit its width (no sideways scroll), the navigation must fit one line on a desktop,
 * and no request may fail (the favicon's 404). Screenshots land in test/web/screenshots/tour-*
 * for a person to look at.
 */
describe.skipIf(!hasChromium)("a tour of every page", () => {
  let d: Dashboard;
  let endUserId: string;
  const routes: [string, string][] = [];

  beforeAll(async () => {
    const transcriber = new ScriptedTranscriber({
      segments: (pcm) =>
        LINES.map((text, i) => ({
          start: (i * pcm.length) / 16_000 / LINES.length,
          end: ((i + 1) * pcm.length) / 16_000 / LINES.length,
          text: ` ${text}`,
          confidence: 0.9,
        })),
    });
    d = await startDashboard({ clock: systemClock, engines: { transcriber, llm: new ScriptedLlm(), embedder: new HashingTestEmbedder() } });
    const key = d.tenant!.test;
    await d.call("PUT", "/v1/config/project", { key, body: { auto_summarize: false } });
    const eu = (await d.call("POST", "/v1/end-users", { key, body: { name: "Simulated wearer 2", external_id: "wearer-2" } })).body;
    endUserId = eu.id;
    const device = (await d.call("POST", "/v1/devices", { key, body: { serial_number: "PIN-0002", model: "parley_pin", name: "Ward pin 2" } })).body;
    await d.call("POST", `/v1/devices/${device.id}/bind`, { key, body: { end_user_id: eu.id } });
    const rec = await seedRecording(d.deps, { projectId: d.tenant!.project.id, mode: "test" }, wav(voicedBurst(12, 0.5, 11.5)), {
      endUserId: eu.id,
      deviceId: device.id,
    });
    await d.call("POST", "/v1/transcriptions", { key, body: { recording_id: rec, language: "en" } });
    await d.deps.queue.drain();
    const txn = (await d.call("GET", `/v1/transcriptions?recording_id=${rec}`, { key })).body.data[0];
    expect(txn.status).toBe("completed");
    for (const template of ["general", "sales", "clinical", "legal"])
      await d.call("POST", "/v1/summaries", { key, body: { transcription_id: txn.id, template } });
    await d.deps.queue.drain();
    const chat = (
      await d.call("POST", "/v1/ask/sessions", {
        key,
        body: { scope: { type: "library" }, end_user_id: eu.id, initial_message: { content: "When is the budget review?", provider: "extractive" } },
      })
    ).body;
    routes.push(
      ["keys", "keys"],
      ["devices", "devices"],
      ["device", `devices/${device.id}`],
      ["end-users", "end-users"],
      ["end-user", `end-users/${eu.id}`],
      ["recordings", "recordings"],
      ["recording", `recordings/${rec}`],
      ["search", `search?end_user_id=${eu.id}&q=budget`],
      ["ask-new", "ask"],
      ["ask", `ask?session=${chat.session_id}`],
      ["webhooks", "webhooks"],
      ["compliance", "compliance"],
      ["system", "system"],
      ["account", "account"],
    );
  }, 120_000);
  afterAll(() => d?.stop());

  for (const [width, height] of [
    [1280, 900],
    [390, 844],
  ] as const) {
    test(`every page at ${width} px fits its width, with the header in its place`, async () => {
      const failed: string[] = [];
      const page = await d.browser.newPage({ ignoreHTTPSErrors: true, viewport: { width, height } });
      page.on("response", (r) => {
        // Before signing in the shell asks for a session and is told there is none.
        if (r.status() >= 400 && !(r.status() === 401 && r.url().endsWith("/dashboard/api/session"))) failed.push(`${r.status()} ${new URL(r.url()).pathname}`);
      });
      await onPage(page, `tour-${width}`, async () => {
        await page.goto(`${d.base}/dashboard`);
        await page.getByRole("button", { name: "Sign in" }).waitFor();
        await screenshot(page, `tour-${width}-sign-in`);
        await signIn(page, d.base);
        for (const [name, route] of routes) {
          await openAnew(page, `${d.base}/dashboard#/${route}`);
          await screenshot(page, `tour-${width}-${name}`);
          const fit = await page.evaluate(() => document.documentElement.scrollWidth);
          if (fit > width) throw new Error(`${name} is ${fit} px wide at ${width} px`);
          const header = await headerLayout(page);
          if (width > 640) {
            // One line of navigation, and the account's controls on the bar above it.
            expect({ name, rows: header.navRows, signOutAboveNav: header.signOutBottom <= header.navTop }).toEqual({ name, rows: 1, signOutAboveNav: true });
          } else {
            // Header and models notice leave the page's heading in the top half of the screen.
            if (header.headingTop > 450) throw new Error(`${name}: the heading starts ${header.headingTop} px down`);
            // Tables become cards: no cell keeps an empty label column, no code runs off the card.
            const cards = await page.evaluate(() => ({
              emptyLabels: Array.from(document.querySelectorAll(".table-wrap td")).filter((td) => getComputedStyle(td, "::before").content === '""').length,
              clippedCode: Array.from(document.querySelectorAll(".table-wrap td code")).filter((c) => c.getBoundingClientRect().right > innerWidth).length,
            }));
            expect({ name, ...cards }).toEqual({ name, emptyLabels: 0, clippedCode: 0 });
          }
          // One button style: every button and button-like link has the same corners and border.
          const buttonStyles = await page.evaluate(() =>
            Array.from(
              new Set(
                Array.from(document.querySelectorAll("#view button:not(.segment), #view a.button"))
                  .filter((b) => b.getClientRects().length)
                  .map((b) => `${getComputedStyle(b).borderRadius} ${getComputedStyle(b).borderTopWidth}`),
              ),
            ),
          );
          expect({ name, buttonStyles: buttonStyles.length <= 1 ? "one" : buttonStyles }).toEqual({ name, buttonStyles: "one" });
          for (const align of await page.locator("caption").evaluateAll((els) => els.map((el) => getComputedStyle(el).textAlign)))
            expect(align).not.toBe("center");
        }
      });
      expect(failed).toEqual([]);
    }, 120_000);
  }

  test("a recording's transcript comes first: before its details on a phone, the wide column on a desktop", async () => {
    const [, route] = routes.find(([name]) => name === "recording")!;
    for (const phone of [true, false]) {
      await onPage(await d.newSignedInPage({ phone }), `tour-recording-order-${phone ? 390 : 1280}`, async (page) => {
        await page.goto(`${d.base}/dashboard#/${route}`);
        await page.getByRole("list", { name: "Transcript segments" }).waitFor();
        const [transcript, details] = await page.evaluate(() =>
          [".transcript", ".recording-side .facts"].map((s) => document.querySelector(s)!.getBoundingClientRect().toJSON() as DOMRect),
        );
        if (phone) expect(transcript!.top).toBeLessThan(details!.top);
        else {
          expect(transcript!.left).toBeLessThan(details!.left);
          expect(transcript!.width).toBeGreaterThan(2 * details!.width);
        }
      });
    }
  });

  test("every page names a favicon the server serves (headless Chromium asks for none by itself)", async () => {
    await onPage(await d.newSignedInPage(), "tour-favicon", async (page) => {
      expect(
        await page.evaluate(async () => {
          const link = document.querySelector<HTMLLinkElement>("link[rel=icon]");
          const r = link && (await fetch(link.href));
          return r ? `${r.status} ${r.headers.get("content-type")}` : "no icon";
        }),
      ).toBe("200 image/svg+xml");
    });
  });

  test("on a phone the project switcher and Sign out open from Menu", async () => {
    await onPage(await d.newSignedInPage({ phone: true }), "tour-phone-menu", async (page) => {
      await page.getByRole("heading", { name: "Keys", level: 1 }).waitFor();
      const signOut = page.getByRole("button", { name: "Sign out" });
      expect(await signOut.isVisible()).toBe(false);
      await page.getByRole("button", { name: "Menu" }).click();
      await signOut.waitFor({ state: "visible" });
      expect(await page.getByRole("button", { name: "Menu" }).getAttribute("aria-expanded")).toBe("true");
      await screenshot(page, "tour-390-menu-open");
    });
  });

  test("on a phone nothing of the keys table is cut off", async () => {
    await onPage(await d.newSignedInPage({ phone: true }), "tour-phone-keys", async (page) => {
      // Every cell of the keys table, the Revoke button included, is on the screen without
      // scrolling the table sideways.
      const revoke = page.getByRole("button", { name: /^Revoke sk_test_/ }).first();
      await revoke.waitFor();
      const layout = await revoke.evaluate((el) => {
        const wrap = el.closest(".table-wrap")!;
        return { hiddenSideways: wrap.scrollWidth - wrap.clientWidth, right: el.getBoundingClientRect().right };
      });
      expect(layout.hiddenSideways).toBe(0);
      expect(layout.right).toBeLessThanOrEqual(390);
    });
  });

  test("a long unbroken word in Ask wraps inside its message, on a phone and a desktop", async () => {
    const key = d.tenant!.test;
    const long = `https://example.org/${"averyveryverylongpathsegment".repeat(12)}`;
    const chat = (
      await d.call("POST", "/v1/ask/sessions", {
        key,
        body: { scope: { type: "library" }, end_user_id: endUserId, initial_message: { content: long, provider: "extractive" } },
      })
    ).body;
    for (const phone of [true, false]) {
      await onPage(await d.newSignedInPage({ phone }), `tour-ask-long-${phone ? 390 : 1280}`, async (page) => {
        await page.goto(`${d.base}/dashboard#/ask?session=${chat.session_id}`);
        const message = page.getByRole("log", { name: "Conversation" }).getByRole("article").filter({ hasText: long });
        await message.waitFor();
        const [msg, column] = await message.evaluate((el) => [el.getBoundingClientRect().right, el.closest(".ask-main")!.getBoundingClientRect().right]);
        expect(msg).toBeLessThanOrEqual(column! + 0.5);
        expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(phone ? 390 : 1280);
      });
    }
  });
});

/** Where the header's parts are: rows of navigation links, Sign out's bottom, the nav's and the page heading's top. */
function headerLayout(page: Page) {
  return page.evaluate(() => {
    const links = Array.from(document.querySelectorAll("#nav a")).map((a) => Math.round(a.getBoundingClientRect().top));
    return {
      navRows: new Set(links).size,
      navTop: document.querySelector("#nav")!.getBoundingClientRect().top,
      signOutBottom: document.querySelector("#sign-out")!.getBoundingClientRect().bottom,
      headingTop: document.querySelector("#view h1")!.getBoundingClientRect().top + scrollY,
    };
  });
}

/**
 * Opens `url` as a new document and waits until it has rendered: its heading is there, nothing
 * says "Loading…" and what it asked for has come. A new document, not a hash change: after one,
 * the page before it would answer the heading's wait, and "networkidle" (a document's) would not
 * wait for what the page asks for.
 */
async function openAnew(page: Page, url: string): Promise<void> {
  await page.goto("about:blank");
  await page.goto(url, { waitUntil: "networkidle" });
  await page.locator("#view h1").waitFor();
  await page.waitForFunction(() => !document.querySelector("#view")!.textContent!.includes("Loading…"));
}

describe.skipIf(!hasChromium)("the first run's pages", () => {
  let d: Dashboard;
  beforeAll(async () => {
    d = await startDashboard({ admin: false, project: null });
  });
  afterAll(() => d?.stop());

  test("setup at 390 and 1280 px; after it the navigation is one line and Sign out stays on the bar", async () => {
    const phone = await d.browser.newPage({ ignoreHTTPSErrors: true, viewport: { width: 390, height: 844 } });
    await onPage(phone, "tour-390-setup", async () => {
      await phone.goto(`${d.base}/dashboard`);
      await phone.getByRole("heading", { name: "Create the first administrator" }).waitFor();
      await screenshot(phone, "tour-390-setup");
    });
    const page = await d.browser.newPage({ ignoreHTTPSErrors: true, viewport: { width: 1280, height: 900 } });
    await onPage(page, "tour-1280-setup", async () => {
      await page.goto(`${d.base}/dashboard`);
      await page.getByRole("heading", { name: "Create the first administrator" }).waitFor();
      await screenshot(page, "tour-1280-setup");
      await page.getByLabel("Email").fill(d.admin.email);
      await page.getByLabel("Password").fill(d.admin.password);
      await page.getByRole("button", { name: "Create administrator" }).click();
      await page.getByRole("heading", { name: "Create a project", level: 1 }).waitFor();
      await screenshot(page, "tour-1280-after-setup");
      const header = await headerLayout(page);
      expect({ rows: header.navRows, signOutAboveNav: header.signOutBottom <= header.navTop }).toEqual({ rows: 1, signOutAboveNav: true });
    });
  });
});
