import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import { createAdmin } from "../../src/modules/admins/service";
import { type Dashboard, hasChromium, onPage, screenshot, signIn, startDashboard } from "./support";

/** Calls /v1 with a key, outside the browser: does the key work? */
const withKey = (d: Dashboard, key: string, path = "/v1/end-users") =>
  fetch(`${d.base}${path}`, { headers: { authorization: `Bearer ${key}` } }).then((r) => r.status);

async function fillSignIn(page: Page, base: string, email: string, password: string) {
  await page.goto(`${base}/dashboard`);
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
}

describe.skipIf(!hasChromium)("administrators in a real browser", () => {
  let d: Dashboard;
  beforeAll(async () => {
    d = await startDashboard();
  });
  afterAll(() => d?.stop());

  test("a wrong password is refused and shows no page; the right one signs in, and Sign out ends the session", async () => {
    const page = await d.browser.newPage();
    await onPage(page, "wrong-password", async () => {
      await fillSignIn(page, d.base, d.admin.email, "not the password at all");
      await page.getByRole("alert").filter({ hasText: "wrong" }).waitFor();
      expect(await page.getByRole("navigation", { name: "Main" }).isVisible()).toBe(false);
      await page.getByLabel("Password").fill(d.admin.password);
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.getByRole("navigation", { name: "Main" }).waitFor();
      await page.getByRole("button", { name: "Sign out" }).click();
      await page.getByRole("button", { name: "Sign in" }).waitFor();
      // The old cookie is gone and its session ended: a reload asks to sign in again.
      await page.reload();
      await page.getByRole("button", { name: "Sign in" }).waitFor();
      expect(await page.getByRole("navigation", { name: "Main" }).isVisible()).toBe(false);
    });
  });

  test("after five wrong passwords the account is locked, even for the right one", async () => {
    await createAdmin(d.deps.db, "locked@clinic.example", "a very long good password", "owner", d.clock.now());
    const page = await d.browser.newPage();
    await onPage(page, "lockout", async () => {
      await page.goto(`${d.base}/dashboard`);
      for (let i = 0; i < 5; i++) {
        await page.getByLabel("Email").fill("locked@clinic.example");
        await page.getByLabel("Password").fill(`wrong guess ${i}`);
        await page.getByRole("button", { name: "Sign in" }).click();
        await page.waitForFunction(() => document.querySelector("#sign-in-error")?.textContent?.includes("wrong"));
        await page.evaluate(() => (document.querySelector("#sign-in-error")!.textContent = ""));
      }
      await page.getByLabel("Password").fill("a very long good password");
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.getByRole("alert").filter({ hasText: "Too many failed sign-ins" }).waitFor();
      expect(await page.getByRole("navigation", { name: "Main" }).isVisible()).toBe(false);
      // The lockout ends with its window (PARLEY_LOGIN_LOCKOUT_MINUTES, 15 by default).
      d.clock.advance(15 * 60_000);
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.getByRole("navigation", { name: "Main" }).waitFor();
    });
  });

  test("a new secret key is shown exactly once, works, is listed by its hint, and is gone after a reload", async () => {
    const page = await d.newSignedInPage();
    await onPage(page, "key-once", async () => {
      await page.getByRole("link", { name: "Keys", exact: true }).click();
      await page.getByRole("heading", { name: "Create a key" }).waitFor();
      await page.getByLabel("Name (optional)").fill("EHR bridge");
      await page.getByRole("button", { name: "Create key" }).click();
      const shown = page.getByLabel("New key", { exact: true });
      await shown.waitFor();
      const key = (await shown.textContent())!;
      expect(key).toMatch(/^sk_test_/);
      expect(await page.getByRole("button", { name: "Copy key" }).isVisible()).toBe(true);
      expect(await withKey(d, key)).toBe(200);
      const hint = `sk_test_...${key.slice(-4)}`;
      await page.getByRole("cell", { name: hint, exact: true }).waitFor();

      await page.reload();
      await page.getByRole("cell", { name: hint, exact: true }).waitFor();
      expect(await page.content()).not.toContain(key);
      expect(await page.getByLabel("New key", { exact: true }).count()).toBe(0);
    });
  });

  test("a restricted key holds only the scopes ticked; one with none ticked is refused beside the scopes", async () => {
    const page = await d.newSignedInPage();
    await onPage(page, "restricted-key", async () => {
      await page.goto(`${d.base}/dashboard#/keys`);
      await page.getByLabel(/^Restricted/).check();
      await page.getByRole("button", { name: "Create key" }).click();
      await page.getByText("Tick at least one scope.").waitFor();
      await page.getByLabel("end_users:read", { exact: true }).check();
      await page.getByRole("button", { name: "Create key" }).click();
      const key = (await page.getByLabel("New key", { exact: true }).textContent())!;
      expect(key).toMatch(/^rk_test_/);
      expect(await withKey(d, key, "/v1/end-users")).toBe(200);
      expect(await withKey(d, key, "/v1/devices")).toBe(403);
      // The form is ready for the next key: back to its default type, the scopes hidden.
      expect(await page.getByLabel(/^Secret/).isChecked()).toBe(true);
      expect(await page.getByLabel("end_users:read", { exact: true }).isVisible()).toBe(false);
    });
  });

  test("an end-user key is confined to the end user chosen", async () => {
    const ada = await d.call("POST", "/v1/end-users", { key: d.tenant!.test, body: { name: "Ada Lovelace" } });
    const page = await d.newSignedInPage();
    await onPage(page, "end-user-key", async () => {
      await page.goto(`${d.base}/dashboard#/keys`);
      await page.getByLabel(/^End user \(/).check();
      await page.getByLabel("End user", { exact: true }).selectOption(ada.body.id);
      await page.getByRole("button", { name: "Create key" }).click();
      const key = (await page.getByLabel("New key", { exact: true }).textContent())!;
      const list = await fetch(`${d.base}/v1/end-users`, { headers: { authorization: `Bearer ${key}` } }).then((r) => r.json());
      expect(list.data.map((u: { id: string }) => u.id)).toEqual([ada.body.id]);
      await page.getByRole("cell", { name: "secret, end user Ada Lovelace" }).waitFor();
    });
  });

  test("revoking asks first; a cancelled revoke keeps the key, a confirmed one refuses it from then on", async () => {
    const key = d.tenant!.key("test");
    const hint = `sk_test_...${key.slice(-4)}`;
    const page = await d.newSignedInPage();
    await onPage(page, "revoke", async () => {
      await page.goto(`${d.base}/dashboard#/keys`);
      await page.getByRole("button", { name: `Revoke ${hint}` }).click();
      await page.getByRole("dialog").getByRole("button", { name: "Cancel" }).click();
      expect(await withKey(d, key)).toBe(200);
      await page.getByRole("button", { name: `Revoke ${hint}` }).click();
      await page.getByRole("dialog").getByRole("button", { name: "Revoke" }).click();
      await page.getByRole("button", { name: `Revoke ${hint}` }).waitFor({ state: "detached" });
      expect(await withKey(d, key)).toBe(401);
    });
  });

  test("the mode switcher changes what the session acts on: live keys are made and listed in live mode only", async () => {
    const page = await d.newSignedInPage();
    await onPage(page, "mode-switch", async () => {
      await page.goto(`${d.base}/dashboard#/keys`);
      await page.getByRole("combobox", { name: "Mode" }).selectOption("live");
      await page.getByText("in live mode").waitFor();
      await page.getByRole("button", { name: "Create key" }).click();
      const key = (await page.getByLabel("New key", { exact: true }).textContent())!;
      expect(key).toMatch(/^sk_live_/);
      expect(await page.getByRole("cell", { name: /^sk_test_/ }).count()).toBe(0);
      await page.getByRole("combobox", { name: "Mode" }).selectOption("test");
      await page.getByText("in test mode").waitFor();
      expect(await page.getByRole("cell", { name: /^sk_live_/ }).count()).toBe(0);
    });
  });

  test("a state-changing request without the session's CSRF token is refused; the dashboard's own carry it", async () => {
    const page = await d.newSignedInPage();
    await onPage(page, "csrf", async () => {
      const statuses = await page.evaluate(async () => {
        const post = (headers: Record<string, string>) =>
          fetch("/v1/end-users", {
            method: "POST",
            headers: { "content-type": "application/json", ...headers },
            body: JSON.stringify({ name: "Mallory" }),
          }).then((r) => r.status);
        const session = await fetch("/dashboard/api/session").then((r) => r.json());
        return {
          without: await post({}),
          wrong: await post({ "x-csrf-token": "0".repeat(64) }),
          right: await post({ "x-csrf-token": session.csrf_token }),
          read: await fetch("/v1/end-users").then((r) => r.status),
        };
      });
      expect(statuses).toEqual({ without: 403, wrong: 403, right: 201, read: 200 });
    });
  });

  test("an idle session expires: the next page asks to sign in again", async () => {
    const page = await d.newSignedInPage();
    await onPage(page, "expired", async () => {
      await page.goto(`${d.base}/dashboard#/keys`);
      await page.getByRole("heading", { name: "Create a key" }).waitFor();
      d.clock.advance(31 * 60_000); // PARLEY_SESSION_IDLE_MINUTES is 30 by default
      await page.getByRole("link", { name: "System", exact: true }).click();
      await page.getByRole("button", { name: "Sign in" }).waitFor();
      expect(await page.getByRole("navigation", { name: "Main" }).isVisible()).toBe(false);
      const status = await page.evaluate(() => fetch("/v1/end-users").then((r) => r.status));
      expect(status).toBe(401);
      // Signing in again returns to where the person was.
      await page.getByLabel("Email").fill(d.admin.email);
      await page.getByLabel("Password").fill(d.admin.password);
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.getByRole("heading", { name: "System", exact: true }).waitFor();
    });
  });

  test("System shows the doctor's checks, models with their install commands, disk and failed jobs with reasons", async () => {
    d.deps.db
      .query(
        "INSERT INTO jobs (id, type, payload, state, attempts, max_attempts, run_at, last_error, created_at, updated_at) VALUES ('job_dead1', 'transcriptions.run', ?, 'dead', 3, 3, ?, 'model_failure: whisper crashed', ?, ?)",
      )
      .run(
        JSON.stringify({ project_id: d.tenant!.project.id, mode: "test", transcription_id: "txn_x1" }),
        d.clock.now().toISOString(),
        d.clock.now().toISOString(),
        d.clock.now().toISOString(),
      );
    const page = await d.newSignedInPage();
    await onPage(page, "system", async () => {
      await page.getByRole("link", { name: "System", exact: true }).click();
      await page.getByRole("heading", { name: "Failed jobs" }).waitFor();
      const text = (await page.textContent("#view"))!;
      expect(text).toContain("model_failure: whisper crashed");
      expect(text).toContain("txn_x1 (acme, test)");
      expect(text).toContain(`models pull ${d.deps.config.models.whisper}`);
      expect(text).toMatch(/database\d/);
      await page.getByText("data dir permissions").waitFor();
    });
  });

  test("keyboard only: sign in, reach a page through the navigation, make a key and dismiss a dialog with Escape", async () => {
    const page = await d.browser.newPage();
    await onPage(page, "keyboard", async () => {
      await page.goto(`${d.base}/dashboard`);
      await page.getByLabel("Email").waitFor();
      // The form takes focus: type, Tab, type, Enter.
      await page.keyboard.type(d.admin.email);
      await page.keyboard.press("Tab");
      await page.keyboard.type(d.admin.password);
      await page.keyboard.press("Enter");
      await page.getByRole("navigation", { name: "Main" }).waitFor();
      // Tab from the top of the page until the System link has focus, then follow it.
      await page.locator("body").focus();
      for (let i = 0; i < 30 && (await page.evaluate(() => document.activeElement?.textContent)) !== "System"; i++) await page.keyboard.press("Tab");
      await page.keyboard.press("Enter");
      await page.getByRole("heading", { name: "System", exact: true }).waitFor();
      expect(await page.evaluate(() => document.activeElement?.id)).toBe("view");

      await page.goto(`${d.base}/dashboard#/keys`);
      await page.getByRole("button", { name: "Create key" }).focus();
      await page.keyboard.press("Enter");
      const key = (await page.getByLabel("New key", { exact: true }).textContent())!;
      // The list is read again after the key is shown: a Revoke button focused before that is
      // thrown away with the old list (Enter then reaches nothing). The new key's row is the new list.
      await page.getByRole("cell", { name: key.replace(/^(sk_[a-z]+_).*(.{4})$/, "$1...$2"), exact: true }).waitFor();
      const revoked = await page.getByRole("cell", { name: "revoked", exact: true }).count();
      await page
        .getByRole("button", { name: /^Revoke/ })
        .first()
        .focus();
      await page.keyboard.press("Enter");
      await page.getByRole("dialog").waitFor();
      await page.keyboard.press("Escape");
      await page.getByRole("dialog").waitFor({ state: "detached" });
      expect(await page.getByRole("cell", { name: "revoked", exact: true }).count()).toBe(revoked);
    });
  });

  test("at 390 px wide no page of the shell overflows sideways", async () => {
    const page = await d.newSignedInPage({ phone: true });
    await onPage(page, "phone", async () => {
      // Each page with what it draws last: the System page its report and the doctor's checks, after its heading.
      for (const [name, heading, drawn] of [
        ["keys", "Keys", ["#keys-title"]],
        ["system", "System", ["#failed-title", "section[aria-labelledby=doctor-title]:not([aria-busy])"]],
      ] as const) {
        await page.goto(`${d.base}/dashboard#/${name}`);
        // This page's own heading: the page before it has an h1 too. (A hash change is no new
        // document, so "networkidle" would not wait for what the page asks for.)
        await page.getByRole("heading", { name: heading, exact: true, level: 1 }).waitFor();
        for (const selector of drawn) await page.locator(`#view ${selector}`).waitFor({ timeout: 60_000 });
        const width = await page.evaluate(() => document.documentElement.scrollWidth);
        await screenshot(page, `phone-${name}`);
        expect(width).toBeLessThanOrEqual(390);
      }
    });
  });
});

describe.skipIf(!hasChromium)("first-run setup in a real browser", () => {
  let d: Dashboard;
  beforeAll(async () => {
    d = await startDashboard({ project: null, admin: false });
  });
  afterAll(() => d?.stop());

  test("with no administrator the box itself is offered setup; afterwards it is closed and the new account signs in", async () => {
    const page = await d.browser.newPage();
    await onPage(page, "setup", async () => {
      await page.goto(`${d.base}/dashboard`);
      await page.getByRole("heading", { name: "Create the first administrator" }).waitFor();
      expect(await page.getByLabel("Setup token").isVisible()).toBe(false);
      await page.getByLabel("Email").fill("first@clinic.example");
      await page.getByLabel("Password").fill("short");
      await page.getByRole("button", { name: "Create administrator" }).click();
      await page.getByRole("alert").filter({ hasText: "12 characters" }).waitFor();
      await page.getByLabel("Password").fill("the first good password");
      await page.getByRole("button", { name: "Create administrator" }).click();
      // A fresh install has no project: the shell says to make one, and New project does.
      await page.getByRole("heading", { name: "Create a project" }).waitFor();
      await page.getByRole("button", { name: "New project" }).click();
      await page.getByLabel("Project name").fill("clinic");
      await page.getByRole("button", { name: "Create project" }).click();
      await page.getByRole("heading", { name: "Keys", exact: true }).waitFor();
      expect(await page.getByRole("combobox", { name: "Project" }).textContent()).toContain("clinic");

      const again = await d.browser.newPage();
      await signIn(again, d.base, { email: "first@clinic.example", password: "the first good password" });
      await again.close();
    });
  });
});
