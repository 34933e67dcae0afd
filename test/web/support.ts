import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";
import { listenWithCertificate } from "../../src/http/listener";
import { createAdmin } from "../../src/modules/admins/service";
import { certificateSource } from "../../src/tls/certificate-source";
import { makeTenant, makeTestApp } from "../helpers";

/** Debian's chromium, driven by playwright-core (.ci/run installs it); browser tests skip without it. */
export const CHROMIUM = "/usr/bin/chromium";
export const hasChromium = existsSync(CHROMIUM);
if (!hasChromium) console.warn("dashboard browser tests skipped: no /usr/bin/chromium (.ci/run installs it)");

/** Where a failing browser test leaves its screenshot (git-ignored). */
export const SCREENSHOTS = join(import.meta.dir, "screenshots");

export const ADMIN = { email: "admin@clinic.example", password: "correct horse battery staple" };

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
  });
}

/** Signs in through the form, as a person does, and waits for the shell. */
export async function signIn(page: Page, base: string, who: { email: string; password: string } = ADMIN): Promise<void> {
  await page.goto(`${base}/dashboard`);
  await page.getByLabel("Email").fill(who.email);
  await page.getByLabel("Password").fill(who.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("navigation", { name: "Main" }).waitFor();
}

/**
 * The real test app (test/helpers.ts) listening on 127.0.0.1 as `serve` listens (HTTPS with
 * `env: { PARLEY_TLS: "auto" }`; pages ignore that certificate's being self-signed), with a project "acme" (a
 * secret key per mode in `tenant`; none with `project: null`), an administrator (ADMIN;
 * none with `admin: false`) and a headless Chromium. `port` (default: any free one) is for a
 * test whose configuration must name the address first (PARLEY_PUBLIC_URL).
 * Call stop() in afterAll. The app's clock is a ManualClock (`t.clock`).
 */
export async function startDashboard(options: Parameters<typeof makeTestApp>[0] & { project?: string | null; admin?: boolean; port?: number } = {}) {
  const t = await makeTestApp(options);
  const tenant = options.project === null ? null : makeTenant(t.deps, options.project ?? "acme");
  if (options.admin !== false) await createAdmin(t.deps.db, ADMIN.email, ADMIN.password, "owner", t.clock.now());
  const listenOptions = {
    port: options.port ?? 0,
    hostname: "127.0.0.1",
    maxRequestBodySize: t.deps.config.uploads.maxBytes,
    idleTimeout: 255,
    reusePort: false as const,
  };
  const listener = listenWithCertificate(
    t.app,
    listenOptions,
    certificateSource(t.deps.config, () => t.clock.now(), t.deps.log),
    t.deps.log,
  );
  const base = listener.url;
  const browser = await launchChromium();
  return {
    ...t,
    base,
    browser,
    tenant,
    admin: ADMIN,
    /** A new page (390 px wide with `phone`) signed in as ADMIN, at the dashboard's first page. */
    async newSignedInPage(opts: { phone?: boolean } = {}): Promise<Page> {
      const page = await browser.newPage({ ignoreHTTPSErrors: true, ...(opts.phone ? { viewport: { width: 390, height: 844 } } : {}) });
      await signIn(page, base);
      return page;
    },
    async stop(): Promise<void> {
      await browser.close();
      await listener.drain(0);
    },
  };
}

export type Dashboard = Awaited<ReturnType<typeof startDashboard>>;

/** Saves a screenshot of `page` as screenshots/<name>.png; returns the path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const path = join(SCREENSHOTS, `${name.replace(/[^\w.-]+/g, "-")}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}

/**
 * Runs `fn` on a page; when it throws, saves a screenshot named `name` first (its path is
 * added to the error) and rethrows. Closes the page either way.
 */
export async function onPage(page: Page, name: string, fn: (page: Page) => Promise<void>): Promise<void> {
  try {
    await fn(page);
  } catch (err) {
    const path = await screenshot(page, `FAILED-${name}`).catch(() => "(no screenshot)");
    if (err instanceof Error) err.message += `\nscreenshot: ${path}`;
    throw err;
  } finally {
    await page.close();
  }
}
