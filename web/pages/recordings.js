import "../components/stylesheet.js";
import { adminApi } from "../api.js";
import { field, select, textInput } from "../components/fields.js";
import { duration } from "../components/format.js";
import { nameBook } from "../components/names.js";
import { pagedTable } from "../components/table.js";
import { h, statusBadge, when } from "../ui.js";
import { uploadForm } from "./recording/upload.js";

const STATUSES = ["pending", "streaming", "uploaded", "processing", "completed", "failed", "integrity_failure"];
const FILTERS = ["end_user_id", "device_id", "status", "from", "to"];

/** Recordings filtered by end user, device, status and date (the API's own filters), and an upload form. */
export async function render(view, ctx) {
  const f = Object.fromEntries(FILTERS.map((k) => [k, ctx.query.get(k) ?? ""]));
  const names = nameBook(ctx.api);
  const table = pagedTable({
    api: ctx.api,
    path: "/recordings",
    query: apiQuery(f),
    caption: "Recordings",
    prepare: names.load,
    empty: FILTERS.some((k) => f[k]) ? "No recording matches these filters." : "No recordings yet.",
    columns: [
      { title: "Recording", cell: (r) => h("a", { href: `#/recordings/${r.id}` }, r.name ?? r.id) },
      { title: "Status", cell: (r) => statusBadge(r.status) },
      { title: "Duration", cell: (r) => duration(r.duration_seconds) },
      { title: "Recorded", cell: (r) => when(r.recorded_at ?? r.created_at) },
      { title: "End user", cell: (r) => names.link("end_user_id", r.end_user_id) },
      { title: "Device", cell: (r) => names.link("device_id", r.device_id) },
    ],
  });
  const upload = await uploadForm(ctx);
  if (ctx.signal.aborted) return; // left while loading: the next page owns the view
  view.replaceChildren(h("h1", {}, "Recordings"), filterForm(ctx, f), reprocessFailed(table), table.el, upload);
  await table.load();
}

/** "Reprocess all failed": recordings that failed (a model was missing, say) are transcribed again, on the server's job queue. */
function reprocessFailed(table) {
  const note = h("span", { role: "status" });
  const button = h("button", { type: "button" }, "Reprocess all failed");
  button.addEventListener("click", async () => {
    button.disabled = true;
    try {
      const { reprocessed } = await adminApi("/recordings/reprocess-failed", { method: "POST" });
      note.textContent = reprocessed ? `${reprocessed} failed recording(s) queued for transcription again.` : "No failed recording to reprocess.";
      await table.load();
    } catch (e) {
      note.textContent = e.message;
    } finally {
      button.disabled = false;
    }
  });
  return h("div", { class: "reprocess" }, button, " ", note);
}

/** Dates are picked as local days: "from" is inclusive, "to" includes the whole day (recorded_before is exclusive). */
function apiQuery(f) {
  const q = {};
  for (const k of ["end_user_id", "device_id", "status"]) if (f[k]) q[k] = f[k];
  if (f.from) q.recorded_after = new Date(`${f.from}T00:00`).toISOString();
  if (f.to) {
    const end = new Date(`${f.to}T00:00`);
    end.setDate(end.getDate() + 1);
    q.recorded_before = end.toISOString();
  }
  return q;
}

function filterForm(ctx, f) {
  const form = h(
    "form",
    { class: "filters", "aria-label": "Filter recordings" },
    field("End user id", textInput("end_user_id", f.end_user_id, { placeholder: "eu_…" })),
    field("Device id", textInput("device_id", f.device_id, { placeholder: "dev_…" })),
    field("Status", select("status", [["", "Any"], ...STATUSES.map((s) => [s, s])], f.status)),
    field("Recorded from", h("input", { type: "date", name: "from", value: f.from })),
    field("Recorded to", h("input", { type: "date", name: "to", value: f.to })),
    h("div", { class: "filter-actions" }, h("button", { type: "submit" }, "Apply filters"), h("a", { href: "#/recordings", class: "button" }, "Clear")),
  );
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const q = new URLSearchParams([...new FormData(form)].filter(([, v]) => String(v).trim() !== "").map(([k, v]) => [k, String(v).trim()]));
    ctx.navigate(`#/recordings${q.size ? `?${q}` : ""}`);
  });
  return form;
}
