import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import { systemClock } from "../../src/clock";
import { openFromNav, untilReplaced, visit } from "./pages-support";
import { type Dashboard, hasChromium, onPage, startDashboard } from "./support";

/**
 * Devices in a real browser: a device driven through the device API with its own token
 * (as a wearable is) comes online on the device page and executes a command sent from it.
 * The server runs on the system clock, and judges "online" by it (decision 135).
 */
describe.skipIf(!hasChromium)("devices in the dashboard", () => {
  let d: Dashboard;
  let endUserId: string;

  beforeAll(async () => {
    d = await startDashboard({ clock: systemClock });
    endUserId = (await d.call("POST", "/v1/end-users", { key: d.tenant!.test, body: { name: "Ada Lovelace", external_id: "patient-1" } })).body.id;
  });
  afterAll(() => d?.stop());

  /** A registered device bound to Ada, and a heartbeat sender with its device token. */
  async function wearable(serial: string, capabilities = 0x03) {
    const key = d.tenant!.test;
    const device = (await d.call("POST", "/v1/devices", { key, body: { serial_number: serial, model: "parley_pin", name: `Pin ${serial}`, capabilities } }))
      .body;
    const token = (await d.call("POST", `/v1/devices/${device.id}/bind`, { key, body: { end_user_id: endUserId } })).body.device_token as string;
    const beat = async (body: Record<string, unknown> = {}) => {
      const r = await d.call("POST", `/v1/devices/${device.id}/heartbeat`, { key: token, body: { channel: "wifi", ...body } });
      expect(r.status).toBe(200);
      return r.body as { commands: { id: string; type: string }[]; ota: { id: string } | null };
    };
    return { id: device.id as string, beat };
  }

  const commandRow = (page: Page, status: string) => page.getByRole("row").filter({ hasText: "Start recording" }).filter({ hasText: status });

  test("a device comes online and executes a start command: pending, delivered, executed", async () => {
    const pin = await wearable("PIN-0001");
    await onPage(await d.newSignedInPage(), "device-command", async (page) => {
      await openFromNav(page, "Devices");
      await page.getByRole("link", { name: "Pin PIN-0001", exact: true }).click();
      const live = page.getByRole("region", { name: "Live state" });
      await live.getByText("offline").waitFor();

      await pin.beat({
        battery_percent: 77,
        storage_used_mb: 300,
        storage_total_mb: 4096,
        signal_strength_dbm: -61,
        recording_state: { device_state: "idle" },
      });
      await live.getByText("online").waitFor();
      await live.getByText("77%").waitFor();
      await live.getByText("-61 dBm").waitFor();

      await page.getByRole("button", { name: "Start recording", exact: true }).click();
      await commandRow(page, "pending").waitFor();
      const delivered = await pin.beat({ recording_state: { device_state: "idle" } });
      expect(delivered.commands.map((c) => c.type)).toEqual(["start_recording"]);
      await commandRow(page, "delivered").waitFor();
      await pin.beat({
        recording_state: { device_state: "recording", initiated_by: "remote" },
        command_results: [{ command_id: delivered.commands[0]!.id, status: "executed" }],
      });
      await commandRow(page, "executed").waitFor();
      await live.getByText("recording", { exact: true }).waitFor();

      // Start while recording: the API's refusal is shown as it says it.
      await page.getByRole("button", { name: "Start recording", exact: true }).click();
      await page.getByRole("alert").filter({ hasText: "already recording" }).waitFor();
    });
  });

  test("settings: the API's validation message appears beside the field; a good value saves", async () => {
    const pin = await wearable("PIN-0002");
    await onPage(await d.newSignedInPage(), "device-settings", async (page) => {
      await visit(page, `${d.base}/dashboard#/devices/${pin.id}`, /^Pin PIN-/);
      const chunk = page.getByLabel("Streaming chunk (KB)", { exact: true });
      await chunk.fill("5000");
      await page.getByRole("button", { name: "Save settings", exact: true }).click();
      const error = page.locator(`#${await chunk.getAttribute("id")}-error`);
      await error.filter({ hasText: "1024" }).waitFor();
      expect(await chunk.getAttribute("aria-invalid")).toBe("true");
      await chunk.fill("512");
      await page.getByRole("button", { name: "Save settings", exact: true }).click();
      await page.getByText("Settings saved.").waitFor();
      expect(await error.textContent()).toBe("");
      const saved = (await d.call("GET", `/v1/devices/${pin.id}`, { key: d.tenant!.test })).body;
      expect(saved.settings.upload.streaming_chunk_kb).toBe(512);
    });
  });

  test("unbind with confirmation, bind again (the token shown once), and a WiFi grant", async () => {
    const pin = await wearable("PIN-0003");
    await onPage(await d.newSignedInPage(), "device-binding", async (page) => {
      await visit(page, `${d.base}/dashboard#/devices/${pin.id}`, /^Pin PIN-/);
      await page.getByRole("button", { name: "Unbind", exact: true }).click();
      await page.getByRole("dialog").getByRole("button", { name: "Unbind", exact: true }).click();
      await page.getByLabel("End user id", { exact: true }).waitFor();
      expect((await d.call("GET", `/v1/devices/${pin.id}`, { key: d.tenant!.test })).body.status).toBe("unbound");

      await page.getByLabel("End user id", { exact: true }).fill(endUserId);
      await page.getByRole("button", { name: "Bind", exact: true }).click();
      const token = await page.getByLabel("Device token", { exact: true }).inputValue();
      expect(token).toMatch(/^dtok_/);
      // The token works: it is the device's own credential now.
      expect((await d.call("POST", `/v1/devices/${pin.id}/heartbeat`, { key: token, body: { channel: "wifi" } })).status).toBe(200);

      await page.getByRole("button", { name: "Create WiFi grant", exact: true }).click();
      expect((await page.getByRole("textbox", { name: "WiFi grant" }).inputValue()).length).toBeGreaterThan(20);
    });
  });

  test("the device list finds a device by serial number and says which are reachable", async () => {
    await onPage(await d.newSignedInPage(), "devices-list", async (page) => {
      await visit(page, `${d.base}/dashboard#/devices`, "Devices");
      // The unfiltered list shows PIN-0002 too: look in the list the search brought.
      await untilReplaced(page, page.getByRole("table").first(), async () => {
        await page.getByLabel("Find by serial number", { exact: true }).fill("PIN-0002");
        await page.getByRole("button", { name: "Search", exact: true }).click();
      });
      await page.getByRole("link", { name: "Pin PIN-0002", exact: true }).waitFor();
      expect(await page.getByRole("link", { name: "Pin PIN-0001", exact: true }).count()).toBe(0);
    });
  });
  test("firmware: assign a published release and follow its progress to applied", async () => {
    const pin = await wearable("PIN-0004");
    // Releases belong to the organization; only a live secret key uploads and publishes them.
    const live = d.tenant!.live;
    const fw = await d.call("POST", "/v1/firmware-releases?version=2.1.0&model=parley_pin&notes=Battery%20fixes", {
      key: live,
      rawBody: new TextEncoder().encode("PARLEY-FW image"),
      headers: { "content-type": "application/octet-stream" },
    });
    expect(fw.status).toBe(201);
    expect((await d.call("POST", `/v1/firmware-releases/${fw.body.id}/publish`, { key: live })).status).toBe(200);
    await onPage(await d.newSignedInPage(), "device-ota", async (page) => {
      await visit(page, `${d.base}/dashboard#/devices/${pin.id}`, /^Pin PIN-/);
      const panel = page.getByRole("region", { name: "Firmware update" });
      await panel.getByLabel("Firmware release", { exact: true }).selectOption({ label: "2.1.0 — Battery fixes" });
      await panel.getByRole("button", { name: "Assign firmware", exact: true }).click();
      const row = panel.getByRole("row").filter({ hasText: "2.1.0" });
      await row.filter({ hasText: "pending" }).waitFor();
      const ota = (await pin.beat()).ota!;
      await pin.beat({ ota_status: { ota_id: ota.id, status: "downloading", progress_percent: 40 } });
      await row.filter({ hasText: "downloading 40%" }).waitFor();
      await pin.beat({ firmware_version: "2.1.0", ota_status: { ota_id: ota.id, status: "applied" } });
      await row.filter({ hasText: "applied" }).waitFor();
    });
  });
});
