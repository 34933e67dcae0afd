// System: the appliance as `parley doctor` sees it, whether the wire is encrypted, its models
// (with the command installing each missing one), free disk, and the jobs in flight and
// failed with their reasons.
import { adminApi } from "../api.js";
import { badge, h, statusBadge, when } from "../ui.js";
import { wireSection } from "./system/wire.js";

const MB = 1024 * 1024;
const size = (bytes) => (bytes >= 1024 * MB ? `${(bytes / 1024 / MB).toFixed(1)} GB` : `${Math.round(bytes / MB)} MB`);

function table(caption, head, rows) {
  return h(
    "div",
    { class: "table-wrap" },
    h("table", {}, h("caption", { class: "muted" }, caption), h("thead", {}, h("tr", {}, head.map((t) => h("th", { scope: "col" }, t)))), h("tbody", {}, rows)),
  );
}

function modelsSection(models) {
  return h(
    "section",
    { "aria-labelledby": "models-title" },
    h("h2", { id: "models-title" }, "Models"),
    table(
      "Models by engine",
      ["Engine", "Model", "Status", "Install with"],
      models.map((m) => h("tr", {}, h("td", {}, m.engine), h("td", {}, m.model), h("td", {}, statusBadge(m.status)), h("td", {}, m.install ? h("code", {}, m.install) : "—"))),
    ),
  );
}

function diskSection(storage) {
  return h(
    "section",
    { "aria-labelledby": "disk-title" },
    h("h2", { id: "disk-title" }, "Disk"),
    table(
      "Free space by volume",
      ["Volume", "Free", "Total", ""],
      storage.map((v) => h("tr", {}, h("td", {}, v.volume), h("td", {}, size(v.free_bytes)), h("td", {}, size(v.total_bytes)), h("td", {}, v.low ? badge("low: new uploads refused", "bad") : badge("ok", "good")))),
    ),
  );
}

function jobsSection(id, title, jobs, empty) {
  const rows = jobs.map((j) =>
    h(
      "tr",
      {},
      h("td", {}, j.type),
      h("td", {}, statusBadge(j.state)),
      h("td", {}, j.subject ?? "—", j.project ? h("span", { class: "muted" }, ` (${j.project}, ${j.mode})`) : ""),
      h("td", {}, `${j.attempts} of ${j.max_attempts}`),
      h("td", {}, when(j.state === "dead" ? j.updated_at : j.created_at)),
      h("td", {}, j.error ?? "—"),
    ),
  );
  return h("section", { "aria-labelledby": id }, h("h2", { id }, title), jobs.length ? table(title, ["Job", "State", "For", "Attempts", "When", "Reason"], rows) : h("p", { class: "muted" }, empty));
}

function checksList(checks) {
  return h(
    "ul",
    { class: "checks" },
    checks.map((c) => h("li", {}, c.ok ? badge("ok", "good") : badge("fail", "bad"), " ", h("strong", {}, c.check), ": ", c.detail)),
  );
}

export async function render(view, ctx) {
  const checks = h("section", { "aria-labelledby": "doctor-title", "aria-busy": "true" }, h("h2", { id: "doctor-title" }, "Checks (parley doctor)"), h("p", { class: "muted" }, "Running the checks…"));
  const live = h("div");
  view.append(h("h1", {}, "System"), live, checks);
  // The report refreshes every few seconds (jobs move); the doctor's checks run once a visit.
  ctx.poll(async () => {
    const { health, transport, jobs } = await adminApi("/system");
    live.replaceChildren(
      h(
        "p",
        {},
        "Status ",
        statusBadge(health.status),
        ` · version ${health.version} · database `,
        statusBadge(health.database.ok ? "ok" : "error"),
        health.queue ? ` · jobs: ${health.queue.queued} queued, ${health.queue.running} running, ${health.queue.dead} failed` : "",
      ),
      wireSection(transport),
      modelsSection(health.models),
      diskSection(health.storage),
      jobsSection("in-flight-title", "Jobs in flight", jobs.in_flight, "No job is queued or running."),
      jobsSection("failed-title", "Failed jobs", jobs.failed, "No job has failed."),
    );
  }, 5000);
  // Not awaited: the first run loads each model, which may take a while.
  adminApi("/system/checks").then(
    (report) => showChecks(checks, ctx.signal, checksList(report.checks)),
    (err) => showChecks(checks, ctx.signal, h("p", { class: "error", role: "alert" }, `The checks failed to run: ${err.message}`)),
  );
}

function showChecks(section, signal, content) {
  if (signal.aborted) return;
  section.replaceChildren(h("h2", { id: "doctor-title" }, "Checks (parley doctor)"), content);
  section.removeAttribute("aria-busy");
}
