import "../components/stylesheet.js";
import { adminApi } from "../api.js";
import { facts } from "../components/facts.js";
import { duration } from "../components/format.js";
import { liveBadge } from "../components/status-badge.js";
import { pagedTable } from "../components/table.js";
import { vocabularyForm } from "../components/vocabulary-form.js";
import { copyButton, h, statusBadge, when } from "../ui.js";

/** One end user: who they are, their devices and their recordings, and where to search or ask. */
export async function render(view, ctx) {
  const user = await ctx.api(`/end-users/${encodeURIComponent(ctx.id)}`);
  const devices = pagedTable({
    api: ctx.api,
    path: "/devices",
    query: { end_user_id: user.id },
    caption: "Devices",
    empty: "No device is bound to this end user.",
    columns: [
      { title: "Device", cell: (d) => h("a", { href: `#/devices/${d.id}` }, d.name ?? d.serial_number) },
      { title: "Serial", cell: (d) => d.serial_number },
      { title: "Reachable", cell: (d) => liveBadge(d.last_heartbeat_at) },
      { title: "Battery", cell: (d) => (d.battery_percent == null ? "—" : `${d.battery_percent}%`) },
    ],
  });
  const recordings = pagedTable({
    api: ctx.api,
    path: "/recordings",
    query: { end_user_id: user.id },
    caption: "Recordings",
    empty: "No recordings yet.",
    columns: [
      { title: "Recording", cell: (r) => h("a", { href: `#/recordings/${r.id}` }, r.name ?? r.id) },
      { title: "Status", cell: (r) => statusBadge(r.status) },
      { title: "Duration", cell: (r) => duration(r.duration_seconds) },
      { title: "Recorded", cell: (r) => when(r.recorded_at ?? r.created_at) },
    ],
  });
  const q = `end_user_id=${encodeURIComponent(user.id)}`;
  const invite = h("div", { class: "invite", "aria-live": "polite" });
  const vocabulary = await vocabularyForm(ctx, `/config/end-users/${encodeURIComponent(user.id)}`, { label: "Their terms" });
  if (ctx.signal.aborted) return; // left while loading: the next page owns the view
  view.replaceChildren(
    h("p", { class: "back" }, h("a", { href: "#/end-users" }, "← End users")),
    h("h1", {}, user.name ?? user.external_id ?? user.id, user.deleted_at ? " " : "", user.deleted_at ? statusBadge("deleted") : ""),
    facts([
      ["Id", user.id],
      ["External id", user.external_id],
      ["Email", user.email],
      ["Created", when(user.created_at)],
    ]),
    h(
      "p",
      { class: "actions" },
      h("a", { href: `#/search?${q}`, class: "button" }, "Search their library"),
      h("a", { href: `#/ask?${q}`, class: "button" }, "Ask about their library"),
      h("a", { href: `#/disclosures/${encodeURIComponent(user.id)}`, class: "button" }, "Disclosures"),
      user.deleted_at ? null : inviteButton(user, invite),
    ),
    invite,
    vocabulary ?? "",
    h("h2", {}, "Devices"),
    devices.el,
    h("h2", {}, "Recordings"),
    recordings.el,
  );
  await Promise.all([devices.load(), recordings.load()]);
}

/** A one-time sign-in link to the wearer's portal (/me), shown once to pass on (decision 147). */
function inviteButton(user, out) {
  const button = h("button", { type: "button" }, "Invite to the portal");
  button.addEventListener("click", async () => {
    try {
      const link = await adminApi(`/end-users/${encodeURIComponent(user.id)}/invite`, { method: "POST" });
      const field = h("input", { readonly: true, value: link.url, "aria-label": "Sign-in link" });
      out.replaceChildren(
        h("p", {}, `A sign-in link for ${user.name ?? user.id}: it works once, until ${when(link.expires_at)}, and is not shown again.`),
        h("p", { class: "row" }, field, copyButton(link.url)),
      );
    } catch (err) {
      out.replaceChildren(h("p", { class: "error", role: "alert" }, err.message));
    }
  });
  return button;
}
