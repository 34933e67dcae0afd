import { formAlert } from "../../components/fields.js";
import { summaryView } from "../../components/summary-view.js";
import { h, statusBadge, when } from "../../ui.js";

const TEMPLATES = [
  ["general", "General"],
  ["sales", "Sales"],
  ["clinical", "Clinical"],
  ["legal", "Legal"],
];

/**
 * Summaries of the latest completed transcription, one per template, each generated or
 * regenerated on demand (POST /summaries re-runs a template under the same id).
 * show(txn) resolves true while one is still processing; onStarted is called after a
 * request starts one, so the page polls again.
 */
export function summariesPanel(ctx) {
  const body = h("div");
  const alert = formAlert();
  const el = h("section", { class: "summaries", "aria-labelledby": "sum-h" }, h("h2", { id: "sum-h" }, "Summaries"), alert, body);
  const panel = { el, show, onStarted: () => {} };
  let txn = null;

  async function show(latest) {
    txn = latest?.status === "completed" ? latest : null;
    if (!txn) {
      body.replaceChildren(h("p", { class: "muted" }, "Summaries are made from a completed transcript."));
      return false;
    }
    const page = await ctx.api("/summaries", { query: { transcription_id: txn.id, limit: 20 } });
    const byTemplate = new Map(page.data.map((s) => [s.template, s]));
    body.replaceChildren(...TEMPLATES.map(([template, label]) => card(template, label, byTemplate.get(template))));
    return page.data.some((s) => s.status === "processing");
  }

  function card(template, label, summary) {
    const busy = summary?.status === "processing";
    const button = h("button", { type: "button", disabled: busy }, `${summary ? "Regenerate" : "Generate"} ${label.toLowerCase()} summary`);
    button.addEventListener("click", () => generate(template));
    const text = !summary
      ? h("p", { class: "muted" }, "Not generated yet.")
      : summary.status === "completed"
        ? h("div", { class: "summary-text" }, ...summaryView(summary))
        : summary.status === "failed"
          ? h("p", { class: "error" }, summary.error?.message ?? "Failed.")
          : h("p", { class: "muted", role: "status" }, "Generating…");
    return h(
      "article",
      { class: "summary", "aria-label": `${label} summary` },
      h("h3", {}, label, " ", summary ? statusBadge(summary.status) : ""),
      text,
      h(
        "div",
        { class: "summary-foot" },
        summary?.completed_at ? h("p", { class: "muted" }, `${when(summary.completed_at)} · ${summary.model ?? ""}`) : null,
        button,
      ),
    );
  }

  async function generate(template) {
    alert.textContent = "";
    try {
      await ctx.api("/summaries", { method: "POST", body: { transcription_id: txn.id, template } });
      panel.onStarted();
      await show(txn);
    } catch (err) {
      alert.textContent = err.message;
    }
  }

  return panel;
}
