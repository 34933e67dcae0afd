// System: the appliance as `parley doctor` sees it, with one verdict per thing and a headline
// that is the worst of them (decision 119): whether the wire is encrypted, its models (with
// the command installing each missing one), free disk, and the jobs in flight and failed.
import { adminApi } from "../api.js";
import { badge, h, statusBadge, when } from "../ui.js";
import { modelsSection } from "./system/models.js";
import { table } from "./system/table.js";
import { checksList, headline } from "./system/verdicts.js";
import { wireSection } from "./system/wire.js";

const MB = 1024 * 1024;
const size = (bytes) => (bytes >= 1024 * MB ? `${(bytes / 1024 / MB).toFixed(1)} GB` : `${Math.round(bytes / MB)} MB`);

function diskSection(storage) {
  return h(
    "section",
    { "aria-labelledby": "disk-title" },
    h("h2", { id: "disk-title" }, "Disk"),
    table(
      "Free space by volume",
      ["Volume", "Free", "Total", "State"],
      storage.map((v) => [v.volume, size(v.free_bytes), size(v.total_bytes), v.low ? badge("low: new uploads refused", "bad") : badge("ok", "good")]),
    ),
  );
}

function jobsSection(id, title, jobs, empty) {
  const rows = jobs.map((j) => [
    j.type,
    statusBadge(j.state),
    [j.subject ?? "—", j.project ? h("span", { class: "muted" }, ` (${j.project}, ${j.mode})`) : ""],
    `${j.attempts} of ${j.max_attempts}`,
    when(j.state === "dead" ? j.updated_at : j.created_at),
    j.error ?? "—",
  ]);
  return h(
    "section",
    { "aria-labelledby": id },
    h("h2", { id }, title),
    jobs.length ? table(title, ["Job", "State", "For", "Attempts", "When", "Reason"], rows) : h("p", { class: "muted" }, empty),
  );
}

export async function render(view, ctx) {
  const checksSection = h(
    "section",
    { "aria-labelledby": "doctor-title", "aria-busy": "true" },
    h("h2", { id: "doctor-title" }, "Checks (parley doctor)"),
    h("p", { class: "muted" }, "Running the checks…"),
  );
  const live = h("div");
  view.append(h("h1", {}, "System"), live, checksSection);
  // The report refreshes every few seconds (jobs move); the doctor's checks run once a visit.
  let report = null;
  let checks = null;
  const show = () => {
    if (!report) return;
    const { health, transport, jobs } = report;
    live.replaceChildren(
      h(
        "p",
        {},
        headline(health, checks),
        ` · version ${health.version} · database `,
        statusBadge(health.database.ok ? "ok" : "error"),
        health.queue ? ` · jobs: ${health.queue.queued} queued, ${health.queue.running} running, ${health.queue.dead} gave up` : "",
      ),
      wireSection(transport),
      modelsSection(report, checks),
      diskSection(health.storage),
      jobsSection("in-flight-title", "Jobs in flight", jobs.in_flight, "No job is queued or running."),
      // Recordings that failed without a job giving up (a missing model) are counted under Checks.
      jobsSection("failed-title", "Failed jobs", jobs.failed, "No job gave up after its retries."),
    );
  };
  ctx.poll(async () => {
    report = await adminApi("/system");
    show();
  }, 5000);
  // Not awaited: the first run loads each model, which may take a while.
  adminApi("/system/checks").then(
    (result) => {
      if (ctx.signal.aborted) return;
      checks = result;
      showChecks(checksSection, checksList(result.checks));
      show();
    },
    (err) => {
      if (ctx.signal.aborted) return;
      // Checks that cannot run are no good news: the headline says so.
      checks = { verdict: "fail", checks: [] };
      showChecks(checksSection, h("p", { class: "error", role: "alert" }, `The checks failed to run: ${err.message}`));
      show();
    },
  );
}

function showChecks(section, content) {
  section.replaceChildren(h("h2", { id: "doctor-title" }, "Checks (parley doctor)"), content);
  section.removeAttribute("aria-busy");
}
