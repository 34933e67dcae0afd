import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { connect, type PeerCertificate } from "node:tls";
import type { Page } from "playwright-core";
import { type Dashboard, hasChromium, onPage, screenshot, startDashboard } from "./support";
import { openFromNav } from "./pages-support";

/** The certificate the server presents on a TLS handshake: what a device or browser sees, read apart from the app. */
function servedCertificate(base: string): Promise<PeerCertificate> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port), rejectUnauthorized: false }, () => {
      resolve(socket.getPeerCertificate());
      socket.end();
    });
    socket.on("error", reject);
  });
}

/** The System page's "Encryption on the wire" facts, term -> text. */
async function wireFacts(page: Page): Promise<Record<string, string>> {
  const section = page.getByRole("region", { name: "Encryption on the wire" });
  await section.waitFor();
  return section.locator("dl.facts").evaluate((dl) => {
    const out: Record<string, string> = {};
    const items = Array.from(dl.children);
    for (let i = 0; i + 1 < items.length; i += 2) out[items[i]!.textContent!] = items[i + 1]!.textContent!;
    return out;
  });
}

describe.skipIf(!hasChromium)("System page: is it encrypted on the wire", () => {
  let tls: Dashboard;
  let plain: Dashboard;
  beforeAll(async () => {
    tls = await startDashboard({ env: { PARLEY_TLS: "auto" } });
    // Configured to listen on every interface without TLS (the test itself listens on loopback).
    plain = await startDashboard({ env: { PARLEY_HOST: "0.0.0.0" } });
  });
  afterAll(async () => {
    await tls?.stop();
    await plain?.stop();
  });

  test("PARLEY_TLS=auto: HTTPS, the self-signed source, the fingerprint the handshake presents, its expiry and HSTS; no warning", async () => {
    expect(tls.base).toStartWith("https://");
    const served = await servedCertificate(tls.base);
    const page = await tls.newSignedInPage();
    await onPage(page, "system-wire-tls", async () => {
      await openFromNav(page, "System");
      const facts = await wireFacts(page);
      expect(facts["Served over"]).toBe("HTTPS");
      expect(facts.Certificate).toStartWith("auto: self-signed");
      expect(facts["SHA-256 fingerprint"]).toBe(served.fingerprint256);
      expect(facts.Expires).toStartWith(new Date(served.valid_to).toISOString().slice(0, 10));
      expect(facts.HSTS).toBe("on");
      expect(await page.getByRole("region", { name: "Encryption on the wire" }).getByRole("alert").count()).toBe(0);
      // The report the page reads carries public facts only: no key material.
      const report = await page.evaluate(() => fetch("/dashboard/api/system").then((r) => r.text()));
      expect(report).toContain(served.fingerprint256);
      expect(report).not.toContain("BEGIN");
      await screenshot(page, "system-wire-tls");
    });
  });

  test("plain HTTP beyond loopback: no certificate, HSTS off, and a visible warning", async () => {
    expect(plain.base).toStartWith("http://");
    const page = await plain.newSignedInPage();
    await onPage(page, "system-wire-plain", async () => {
      await openFromNav(page, "System");
      const facts = await wireFacts(page);
      expect(facts["Served over"]).toBe("plain HTTP");
      expect(facts.Certificate).toBe("none");
      expect(facts["SHA-256 fingerprint"]).toBe("—");
      expect(facts.HSTS).toBe("off");
      const warning = page.getByRole("region", { name: "Encryption on the wire" }).getByRole("alert");
      expect(await warning.isVisible()).toBe(true);
      expect(await warning.textContent()).toContain("PARLEY_HOST=0.0.0.0 listens beyond loopback on plain HTTP");
      await screenshot(page, "system-wire-plain");
    });
  });
});
