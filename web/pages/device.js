import "../components/stylesheet.js";
import { facts } from "../components/facts.js";
import { megabytes, orDash } from "../components/format.js";
import { nameBook } from "../components/names.js";
import { liveBadge } from "../components/status-badge.js";
import { h, statusBadge, when } from "../ui.js";
import { bindingPanel } from "./device/binding.js";
import { commandsPanel } from "./device/commands.js";
import { otaPanel } from "./device/ota.js";
import { settingsEditor } from "./device/settings.js";
import { wifiGrantPanel } from "./device/wifi-grant.js";

/** GET /devices/{id}/state is built for polling every 1-10 seconds (spec 4.2). */
const LIVE_MS = 3_000;

/** One device: live state, binding, commands, settings, firmware and WiFi grant. */
export async function render(view, ctx) {
  const path = `/devices/${encodeURIComponent(ctx.id)}`;
  const device = await ctx.api(path);
  const names = nameBook(ctx.api);
  await names.load([device]);
  const title = h("h1", {}, device.name ?? device.serial_number);
  // Not a live region: it is rebuilt every few seconds and would be read out each time.
  const live = h("div", { class: "live" });
  const binding = bindingPanel(ctx, device, names);
  const commands = commandsPanel(ctx, device.id);
  const ota = otaPanel(ctx, device);
  if (ctx.signal.aborted) return; // left while loading: the next page owns the view
  view.replaceChildren(
    h("p", { class: "back" }, h("a", { href: "#/devices" }, "← Devices")),
    title,
    h(
      "div",
      { class: "device-grid" },
      h("section", { class: "panel", "aria-labelledby": "live-h" }, h("h2", { id: "live-h" }, "Live state"), live),
      binding.el,
    ),
    commands.el,
    settingsEditor(ctx, device),
    ota.el,
    wifiGrantPanel(ctx, device),
  );

  async function refresh() {
    const [current, state] = await Promise.all([ctx.api(path), ctx.api(`${path}/state`)]);
    await names.load([current]);
    live.replaceChildren(liveFacts(current, state, names));
    binding.update(current);
    await Promise.all([commands.refresh(), ota.refresh()]);
  }
  live.replaceChildren(liveFacts(device, null, names));
  ctx.poll(refresh, LIVE_MS);
}

/** What the last heartbeat said, with reachability by the 15-minute rule (spec 2.5). */
function liveFacts(device, state, names) {
  const rs = state?.recording_state ?? device.recording_state ?? {};
  const recording = rs.device_state ?? "unknown";
  return facts([
    ["Reachable", liveBadge(device.last_heartbeat_at)],
    ["Recording", h("span", {}, statusBadge(recording), rs.started_at ? ` since ${when(rs.started_at)}` : "", rs.initiated_by ? ` (${rs.initiated_by})` : "")],
    ["Battery", orDash(device.battery_percent, "%")],
    ["Storage", megabytes(device.storage_used_mb, device.storage_total_mb)],
    ["Signal", orDash(device.signal_strength_dbm, " dBm")],
    ["Pending on device", orDash(rs.pending_recordings)],
    ["Last heartbeat", `${when(device.last_heartbeat_at)}${state?.last_seen_by ? ` over ${state.last_seen_by}` : ""}`],
    [
      "Binding",
      h("span", {}, statusBadge(device.status), device.end_user_id ? " to " : "", device.end_user_id ? names.link("end_user_id", device.end_user_id) : ""),
    ],
    ["Model", device.model],
    ["Firmware", orDash(device.firmware_version)],
    ["Serial", device.serial_number],
  ]);
}
