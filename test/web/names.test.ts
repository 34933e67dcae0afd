import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { visit } from "./pages-support";
import { type Dashboard, hasChromium, onPage, startDashboard } from "./support";

/**
 * People and devices appear by name, not by eu_…/dev_… id (issue 31, item 6): the
 * recordings list, a recording's page and a device's binding. Each distinct id is read
 * once, however many rows name it.
 */
describe.skipIf(!hasChromium)("names, not ids, in the dashboard", () => {
  let d: Dashboard;
  let endUserId: string;
  let deviceId: string;
  let recordingId: string;

  beforeAll(async () => {
    d = await startDashboard();
    const key = d.tenant!.test;
    endUserId = (await d.call("POST", "/v1/end-users", { key, body: { name: "Simulated wearer 2" } })).body.id;
    deviceId = (await d.call("POST", "/v1/devices", { key, body: { serial_number: "SIM-0002", model: "parley_pin", name: "Ward pin 2" } })).body.id;
    expect((await d.call("POST", `/v1/devices/${deviceId}/bind`, { key, body: { end_user_id: endUserId } })).status).toBe(200);
    for (const name of ["Morning round", "Evening round", "Night round"]) {
      recordingId = (await d.call("POST", "/v1/recordings", { key, body: { name, end_user_id: endUserId, device_id: deviceId } })).body.id;
    }
  });
  afterAll(() => d?.stop());

  test("the recordings list names each recording's end user and device, reading each once", async () => {
    const page = await d.newSignedInPage();
    const lookups: string[] = [];
    page.on("request", (r) => {
      const path = new URL(r.url()).pathname;
      if (/^\/v1\/(end-users|devices)\/[^/]+$/.test(path)) lookups.push(path);
    });
    await onPage(page, "names-recordings", async () => {
      await visit(page, `${d.base}/dashboard#/recordings`, "Recordings");
      const table = page.getByRole("table", { name: "Recordings" });
      const row = table.getByRole("row").filter({ hasText: "Night round" });
      await row.getByRole("link", { name: "Simulated wearer 2", exact: true }).waitFor();
      expect(await row.getByRole("link", { name: "Simulated wearer 2", exact: true }).getAttribute("href")).toBe(`#/end-users/${endUserId}`);
      expect(await row.getByRole("link", { name: "Ward pin 2", exact: true }).getAttribute("href")).toBe(`#/devices/${deviceId}`);
      const text = (await table.textContent())!;
      expect(text).not.toContain("eu_");
      expect(text).not.toContain("dev_");
      expect(lookups.sort()).toEqual([`/v1/devices/${deviceId}`, `/v1/end-users/${endUserId}`]);
    });
  });

  test("a recording's page says whose it is and from which device, by name", async () => {
    await onPage(await d.newSignedInPage({ phone: true }), "names-recording", async (page) => {
      await visit(page, `${d.base}/dashboard#/recordings/${recordingId}`, /Night round/);
      await page.getByRole("link", { name: "Simulated wearer 2", exact: true }).waitFor();
      await page.getByRole("link", { name: "Ward pin 2", exact: true }).waitFor();
      expect(await page.locator("#view").textContent()).not.toContain(endUserId);
    });
  });

  test("the devices list and a legal hold name the end user too", async () => {
    expect((await d.call("POST", "/v1/legal-holds", { key: d.tenant!.test, body: { matter: "Smith v. Ward", end_user_id: endUserId } })).status).toBe(201);
    await onPage(await d.newSignedInPage(), "names-devices-holds", async (page) => {
      await visit(page, `${d.base}/dashboard#/devices`, "Devices");
      const device = page.getByRole("table", { name: "Devices" }).getByRole("row").filter({ hasText: "Ward pin 2" });
      await device.getByRole("link", { name: "Simulated wearer 2", exact: true }).waitFor();
      await visit(page, `${d.base}/dashboard#/compliance`, "Compliance");
      const hold = page.getByRole("table", { name: "Legal holds" }).getByRole("row").filter({ hasText: "Smith v. Ward" });
      await hold.getByText("End user Simulated wearer 2").waitFor();
    });
  });

  test("the device page says Bound to the end user's name, linking to them", async () => {
    await onPage(await d.newSignedInPage(), "names-device", async (page) => {
      await visit(page, `${d.base}/dashboard#/devices/${deviceId}`, "Ward pin 2");
      const binding = page.getByRole("region", { name: "Binding" });
      await binding.getByText("Bound to Simulated wearer 2.").waitFor();
      expect(await binding.getByRole("link", { name: "Simulated wearer 2", exact: true }).getAttribute("href")).toBe(`#/end-users/${endUserId}`);
      const live = page.getByRole("region", { name: "Live state" });
      await live.getByRole("link", { name: "Simulated wearer 2", exact: true }).waitFor();
      expect(await page.locator("#view").textContent()).not.toContain(endUserId);
    });
  });
});
