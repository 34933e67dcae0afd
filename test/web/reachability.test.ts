import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type Dashboard, hasChromium, onPage, signIn, startDashboard } from "./support";
import { visit } from "./pages-support";

/**
 * Spec 2.5's online rule in the dashboard is judged by the server, on its clock, not by the
 * browser's (decision 135): the browser here runs an hour ahead of the server, as a laptop
 * with a wrong clock would, and still sees a device that beat just now as online.
 */
describe.skipIf(!hasChromium)("reachability badges", () => {
  let d: Dashboard;
  beforeAll(async () => {
    d = await startDashboard();
  });
  afterAll(() => d?.stop());

  test("a device is online by the server's clock, and offline once 15 minutes pass there", async () => {
    const key = d.tenant!.test;
    const device = (await d.call("POST", "/v1/devices", { key, body: { serial_number: "PIN-CLOCK", model: "parley_pin", name: "Pin clock" } })).body;
    const endUser = (await d.call("POST", "/v1/end-users", { key, body: { name: "Ada Lovelace" } })).body;
    const token = (await d.call("POST", `/v1/devices/${device.id}/bind`, { key, body: { end_user_id: endUser.id } })).body.device_token as string;
    const beat = await d.call("POST", `/v1/devices/${device.id}/heartbeat`, { key: token, body: { channel: "wifi" } });
    expect(beat.status).toBe(200);

    const page = await d.browser.newPage({ ignoreHTTPSErrors: true });
    await page.clock.install({ time: new Date(d.clock.now().getTime() + 3600_000) });
    await onPage(page, "reachability-clock", async () => {
      await signIn(page, d.base);
      await visit(page, `${d.base}/dashboard#/devices/${device.id}`, "Pin clock");
      const live = page.getByRole("region", { name: "Live state" });
      await live.getByText("online", { exact: true }).waitFor();

      d.clock.advance(15 * 60_000);
      // The device page polls: the badge turns once the server's clock has passed the window.
      await live.getByText("offline", { exact: true }).waitFor();
    });
  });

  test("the endpoint answers one verdict per timestamp, refuses a non-date, and needs a session", async () => {
    const now = d.clock.now().getTime();
    const page = await d.newSignedInPage();
    await onPage(page, "reachability-api", async () => {
      const ask = (query: string) =>
        page.evaluate(async (q) => {
          const r = await fetch(`/dashboard/api/reachability?${q}`);
          return { status: r.status, body: await r.json() };
        }, query);
      const fresh = new Date(now - 60_000).toISOString();
      const stale = new Date(now - 15 * 60_000).toISOString();
      const both = await ask(`last_heartbeat_at=${fresh}&last_heartbeat_at=${stale}`);
      expect(both).toEqual({ status: 200, body: { online: [true, false], server_time: new Date(now).toISOString() } });
      const bad = await ask("last_heartbeat_at=yesterday");
      expect(bad.status).toBe(400);
      expect(bad.body.error).toMatchObject({ code: "invalid_request", param: "last_heartbeat_at" });
    });
    expect(
      (await fetch(`${d.base}/dashboard/api/reachability?last_heartbeat_at=${new Date(now).toISOString()}`, { tls: { rejectUnauthorized: false } })).status,
    ).toBe(401);
  });
});
