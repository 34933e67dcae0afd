import { field, formAlert, select, showError } from "../../components/fields.js";
import { renderTable } from "../../components/table.js";
import { h, statusBadge, when } from "../../ui.js";

const IN_FLIGHT = new Set(["pending", "delivered"]);

/** Over-the-air firmware: assign a published release for the device's model and follow its progress. */
export function otaPanel(ctx, device) {
  const path = `/devices/${device.id}/ota`;
  const alert = formAlert();
  const list = h("div", { class: "table-wrap" });
  const form = h("form", { class: "row-form", novalidate: "" });
  const el = h("section", { class: "panel", "aria-labelledby": "ota-h" }, h("h2", { id: "ota-h" }, "Firmware update"), form, alert, list);
  let releasesLoaded = false;

  async function loadReleases() {
    const page = await ctx.api("/firmware-releases", { query: { limit: 100 } });
    const fits = page.data.filter((r) => r.model === device.model);
    if (!fits.length) {
      form.replaceChildren(h("p", { class: "muted" }, `No published firmware for ${device.model}. Add one with parley firmware add.`));
      return;
    }
    const choice = select(
      "firmware_release_id",
      fits.map((r) => [r.id, `${r.version}${r.notes ? ` — ${r.notes}` : ""}`]),
    );
    form.replaceChildren(field("Firmware release", choice, { param: "firmware_release_id" }), h("button", { type: "submit" }, "Assign firmware"));
  }

  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    alert.textContent = "";
    try {
      await ctx.api(path, { method: "POST", body: { firmware_release_id: form.elements.firmware_release_id.value } });
    } catch (err) {
      showError(form, err);
    }
    await refresh();
  });

  async function cancel(ota) {
    try {
      await ctx.api(`${path}/${ota.id}/cancel`, { method: "POST" });
    } catch (err) {
      alert.textContent = err.message;
    }
    await refresh();
  }

  async function refresh() {
    if (!releasesLoaded) {
      releasesLoaded = true;
      await loadReleases().catch((err) => form.replaceChildren(h("p", { class: "muted" }, `Firmware releases are not available: ${err.message}`)));
    }
    const page = await ctx.api(path, { query: { limit: 5 } });
    list.replaceChildren(
      page.data.length
        ? renderTable(
            "Firmware assignments",
            [
              { title: "Version", cell: (o) => o.firmware?.version ?? o.firmware_release_id },
              { title: "Status", cell: (o) => statusBadge(o.status) },
              { title: "Progress", cell: progress },
              { title: "Assigned", cell: (o) => when(o.assigned_at) },
              { title: "Applied", cell: (o) => when(o.applied_at) },
              { title: "Error", cell: (o) => o.error_message ?? "—" },
              { title: "", cell: (o) => (IN_FLIGHT.has(o.status) ? cancelButton(o) : "") },
            ],
            page.data,
          )
        : h("p", { class: "muted" }, "No firmware assigned yet."),
    );
  }

  function cancelButton(ota) {
    const b = h("button", { type: "button" }, "Cancel update");
    b.addEventListener("click", () => cancel(ota));
    return b;
  }

  return { el, refresh };
}

function progress(o) {
  if (!o.progress) return "—";
  const pct = o.progress.percent;
  const bar = h("progress", { max: "100", "aria-label": `${o.progress.stage} progress` });
  if (pct != null) bar.value = pct;
  return h("span", { class: "progress" }, `${o.progress.stage} ${pct == null ? "" : `${pct}%`} `, bar);
}
