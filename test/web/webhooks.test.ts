import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { systemClock } from "../../src/clock";
import { waitFor } from "../helpers";
import { type Receiver, rerunTrustingCa, startReceiver, type TlsFiles, trustedTlsFiles } from "../support/https-receiver";
import { openFromNav } from "./pages-support";
import { type Dashboard, hasChromium, onPage, startDashboard } from "./support";

// Deliveries go over real HTTPS to a receiver on this box. Bun trusts NODE_EXTRA_CA_CERTS
// only when set at start, so this file re-runs itself in a child that trusts a throwaway CA
// (as test/modules/webhooks-delivery.test.ts does); the child runs the browser tests below.
const tls = trustedTlsFiles();

if (!hasChromium) test.skip("webhooks in the dashboard (no chromium)", () => {});
else if (!tls) {
  test("webhooks in the dashboard, in a child process trusting a test CA", async () => {
    const { code, output } = await rerunTrustingCa(["test", "--timeout", "60000", import.meta.path]);
    if (code !== 0) console.error(output);
    expect(output).toMatch(/\b[1-9]\d* pass/);
    expect(output).toMatch(/\b0 fail/);
    expect(code).toBe(0);
  }, 240_000);
} else webhookSuite(tls);

function webhookSuite(tls: TlsFiles) {
  describe("webhooks in the dashboard", () => {
    let d: Dashboard;
    let receiver: Receiver;

    beforeAll(async () => {
      receiver = startReceiver(tls);
      d = await startDashboard({ clock: systemClock, env: { PARLEY_WEBHOOK_ALLOW_HOSTS: "127.0.0.1", PARLEY_WEBHOOK_TIMEOUT_MS: "2000" } });
    });
    afterAll(async () => {
      await d?.stop();
      receiver?.stop();
    });

    /** An event through the API (a recording entry), delivered by the dispatcher. */
    async function recordingCreated(name: string) {
      await d.call("POST", "/v1/recordings", { key: d.tenant!.test, body: { name } });
      await d.deps.webhooks.drain();
    }

    test("create an endpoint (secret once), see a delivery in the log, retry a failed one, re-enable a disabled endpoint", async () => {
      await onPage(await d.newSignedInPage(), "webhooks", async (page) => {
        await openFromNav(page, "Webhooks");
        await page.getByText("Add an endpoint").click();
        await page.getByLabel("Endpoint URL", { exact: true }).fill(`${receiver.url}/parley`);
        await page.getByRole("button", { name: "Create endpoint", exact: true }).click();
        const secret = await page.getByLabel("Signing secret", { exact: true }).inputValue();
        expect(secret).toMatch(/^whsec_/);
        const endpoint = page.getByRole("article", { name: `Endpoint ${receiver.url}/parley` });
        await endpoint.waitFor();
        // The form is back to its defaults for the next endpoint: all events, the single ones off.
        expect(await page.getByLabel("All events", { exact: true }).isChecked()).toBe(true);
        expect(await page.getByLabel("recording.created", { exact: true }).isDisabled()).toBe(true);

        // A delivery that succeeds: status, latency and the receiver's answer.
        receiver.behave(() => ({ status: 200, body: "thanks" }));
        await recordingCreated("First");
        const ok = endpoint.getByRole("row").filter({ hasText: "recording.created" }).filter({ hasText: "succeeded" });
        await ok.waitFor();
        expect(await ok.textContent()).toContain("HTTP 200");
        expect(await ok.textContent()).toMatch(/\d+ ms/);

        // A failing one, retried by hand once the receiver is back.
        receiver.behave(() => ({ status: 500, body: "down" }));
        await recordingCreated("Second");
        const failing = endpoint.getByRole("row").filter({ hasText: "HTTP 500" });
        await failing.waitFor();
        const received = receiver.received.length;
        receiver.behave(() => ({ status: 200 }));
        await failing.getByRole("button", { name: /^Retry recording.created/ }).click();
        await waitFor("the retried delivery", async () => {
          await d.deps.webhooks.drain();
          return receiver.received.length > received;
        });
        await endpoint.getByRole("row").filter({ hasText: "succeeded" }).nth(1).waitFor();

        // The secret was shown once: after a reload it is nowhere on the page.
        await page.reload();
        await endpoint.waitFor();
        expect(await page.content()).not.toContain(secret);

        // Disabled after days of failures (set here, as the dispatcher would): Re-enable retries the newest delivery.
        const id = (await d.call("GET", "/v1/webhooks", { key: d.tenant!.test })).body.data[0].id;
        d.deps.db
          .query("UPDATE webhook_endpoints SET disabled_at = ?, failing_since = ? WHERE id = ?")
          .run(new Date().toISOString(), new Date(Date.now() - 4 * 86_400_000).toISOString(), id);
        await endpoint.getByText("after 3 days of failures").waitFor();
        await endpoint.getByRole("button", { name: "Re-enable", exact: true }).click();
        await waitFor("the endpoint re-enabled", async () => {
          await d.deps.webhooks.drain();
          return (await d.call("GET", `/v1/webhooks/${id}`, { key: d.tenant!.test })).body.status === "enabled";
        });
        await endpoint.getByText("enabled", { exact: true }).waitFor();
      });
    }, 60_000);
  });
}
