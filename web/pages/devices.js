import "../components/stylesheet.js";
import { field, formAlert, select, showError, textInput } from "../components/fields.js";
import { searchBox } from "../components/search-box.js";
import { nameBook } from "../components/names.js";
import { liveBadge } from "../components/status-badge.js";
import { pagedTable } from "../components/table.js";
import { h, statusBadge, when } from "../ui.js";

const LIST_REFRESH_MS = 10_000;

/** Devices: find by serial number (exact), filter by binding, live reachability; register one. */
export async function render(view, ctx) {
  const serial = ctx.query.get("serial_number") ?? "";
  const status = ctx.query.get("status") ?? "";
  const query = { ...(serial ? { serial_number: serial } : {}), ...(status ? { status } : {}) };
  const names = nameBook(ctx.api);
  const table = pagedTable({
    api: ctx.api,
    path: "/devices",
    query,
    caption: "Devices",
    prepare: names.load,
    empty: serial ? `No device has the serial number “${serial}”.` : "No devices yet.",
    columns: [
      { title: "Device", cell: (d) => h("a", { href: `#/devices/${d.id}` }, d.name ?? d.serial_number) },
      { title: "Serial", cell: (d) => d.serial_number },
      { title: "Binding", cell: (d) => statusBadge(d.status) },
      { title: "End user", cell: (d) => names.link("end_user_id", d.end_user_id) },
      { title: "Reachable", cell: (d) => liveBadge(d.last_heartbeat_at) },
      { title: "Battery", cell: (d) => (d.battery_percent == null ? "—" : `${d.battery_percent}%`) },
      { title: "Recording", cell: (d) => d.recording_state?.device_state ?? "—" },
      { title: "Last heartbeat", cell: (d) => when(d.last_heartbeat_at) },
    ],
  });
  const statusFilter = select(
    "status",
    [
      ["", "Any"],
      ["bound", "Bound"],
      ["unbound", "Unbound"],
    ],
    status,
  );
  statusFilter.addEventListener("change", () => ctx.navigate(devicesHash(serial, statusFilter.value)));
  if (ctx.signal.aborted) return; // left while loading: the next page owns the view
  view.replaceChildren(
    h("h1", {}, "Devices"),
    h(
      "div",
      { class: "filters" },
      searchBox({ label: "Find by serial number", value: serial, onSearch: (q) => ctx.navigate(devicesHash(q, status)) }),
      field("Binding", statusFilter),
    ),
    table.el,
    registerForm(ctx),
  );
  await table.load();
  // The list keeps its reachability honest while it is on screen.
  ctx.poll(() => table.reload(), LIST_REFRESH_MS);
}

function devicesHash(serial, status) {
  const q = new URLSearchParams({ ...(serial ? { serial_number: serial } : {}), ...(status ? { status } : {}) }).toString();
  return q ? `#/devices?${q}` : "#/devices";
}

function registerForm(ctx) {
  const form = h(
    "form",
    { class: "stack", novalidate: "" },
    field("Serial number", textInput("serial_number", "", { autocomplete: "off" }), { param: "serial_number" }),
    field("Model", select("model", ["parley_pin", "parley_note"]), { param: "model" }),
    field("Name", textInput("name", "", { autocomplete: "off" }), { param: "name" }),
    h("button", { type: "submit" }, "Register device"),
    formAlert(),
  );
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const data = Object.fromEntries(new FormData(form));
    const body = {
      serial_number: String(data.serial_number).trim(),
      model: data.model,
      ...(String(data.name).trim() ? { name: String(data.name).trim() } : {}),
    };
    try {
      const device = await ctx.api("/devices", { method: "POST", body });
      ctx.navigate(`#/devices/${device.id}`);
    } catch (err) {
      showError(form, err);
    }
  });
  return h("details", { class: "panel" }, h("summary", {}, "Register a device"), form);
}
