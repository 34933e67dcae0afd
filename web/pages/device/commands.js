import { formAlert } from "../../components/fields.js";
import { renderTable } from "../../components/table.js";
import { h, statusBadge, when } from "../../ui.js";

const ACTIONS = [
  ["start_recording", "Start recording"],
  ["stop_recording", "Stop recording"],
  ["trigger_upload", "Trigger upload"],
];
const LABEL = Object.fromEntries([...ACTIONS, ["factory_reset", "Factory reset"]]);
const OPEN = new Set(["pending", "delivered"]);

/**
 * Remote commands: send one, and watch each move pending -> delivered -> executed as the
 * device's heartbeats carry it (refresh() is called by the device page's poll).
 */
export function commandsPanel(ctx, deviceId) {
  const path = `/devices/${deviceId}/commands`;
  const alert = formAlert();
  const list = h("div", { class: "table-wrap" });
  // Only a change of status is announced, not every refresh of the table.
  const news = h("p", { role: "status", class: "visually-hidden" });
  const seen = new Map();
  const buttons = ACTIONS.map(([type, label]) => {
    const b = h("button", { type: "button" }, label);
    b.addEventListener("click", () => send(type));
    return b;
  });
  const el = h(
    "section",
    { class: "panel", "aria-labelledby": "cmd-h" },
    h("h2", { id: "cmd-h" }, "Commands"),
    h("p", { class: "muted" }, "A device takes commands while its last heartbeat is under 60 seconds old."),
    h("div", { class: "actions" }, ...buttons),
    alert,
    news,
    list,
  );

  async function send(type) {
    alert.textContent = "";
    try {
      await ctx.api(path, { method: "POST", body: { type } });
    } catch (err) {
      alert.textContent = err.message;
    }
    await refresh();
  }

  async function cancel(cmd) {
    try {
      await ctx.api(`${path}/${cmd.id}/cancel`, { method: "POST" });
    } catch (err) {
      alert.textContent = err.message;
    }
    await refresh();
  }

  async function refresh() {
    const page = await ctx.api(path, { query: { limit: 10 } });
    const changed = page.data.filter((c) => seen.has(c.id) && seen.get(c.id) !== c.status);
    for (const c of page.data) seen.set(c.id, c.status);
    if (changed.length) news.textContent = changed.map((c) => `${LABEL[c.type] ?? c.type}: ${c.status}.`).join(" ");
    list.replaceChildren(
      page.data.length
        ? renderTable(
            "Recent commands",
            [
              { title: "Command", cell: (c) => LABEL[c.type] ?? c.type },
              { title: "Status", cell: (c) => statusBadge(c.status) },
              { title: "Sent", cell: (c) => when(c.created_at) },
              { title: "Delivered", cell: (c) => when(c.delivered_at) },
              { title: "Executed", cell: (c) => when(c.executed_at) },
              { title: "Error", cell: (c) => c.error?.message ?? "—" },
              { title: "", cell: (c) => (OPEN.has(c.status) ? cancelButton(c) : "") },
            ],
            page.data,
          )
        : h("p", { class: "muted" }, "No commands sent yet."),
    );
  }

  function cancelButton(cmd) {
    const b = h("button", { type: "button", "aria-label": `Cancel ${LABEL[cmd.type] ?? cmd.type}` }, "Cancel");
    b.addEventListener("click", () => cancel(cmd));
    return b;
  }

  return { el, refresh };
}
