import "../components/stylesheet.js";
import { endUserSelect } from "../components/end-user-select.js";
import { field, formAlert, showError, textInput } from "../components/fields.js";
import { clockTime, recordingAt } from "../components/format.js";
import { h, when } from "../ui.js";

/**
 * Search an end user's library (POST /recordings/search: semantic and keyword, fused).
 * The search lives in the URL (#/search?end_user_id=&q=), so a result list can be shared
 * and Back returns to it; each hit opens its recording at the chunk's offset.
 */
export async function render(view, ctx) {
  const endUser = ctx.query.get("end_user_id") ?? "";
  const q = ctx.query.get("q") ?? "";
  const results = h("section", { "aria-label": "Search results", "aria-live": "polite" });
  const form = h(
    "form",
    { role: "search", class: "search-form", novalidate: "" },
    field("End user", await endUserSelect(ctx.api, endUser), { param: "end_user_id" }),
    field("Search for", textInput("q", q, { type: "search", autocomplete: "off" }), { param: "query" }),
    h("button", { type: "submit" }, "Search"),
    formAlert(),
  );
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const params = new URLSearchParams({ end_user_id: form.elements.end_user_id.value, q: form.elements.q.value.trim() });
    ctx.navigate(`#/search?${params}`);
  });
  if (ctx.signal.aborted) return; // left while loading: the next page owns the view
  view.replaceChildren(h("h1", {}, "Search"), form, results);
  if (!q) return;
  try {
    const body = { query: q, limit: 20, ...(endUser ? { end_user_id: endUser } : {}) };
    const found = await ctx.api("/recordings/search", { method: "POST", body });
    results.replaceChildren(
      h("h2", {}, `${found.results.length} result${found.results.length === 1 ? "" : "s"}`),
      found.results.length ? h("ol", { class: "results" }, ...found.results.map(result)) : h("p", { class: "muted" }, "Nothing in this library matches."),
    );
  } catch (err) {
    showError(form, err);
  }
}

function result(r) {
  const at = clockTime(r.start_ms / 1000);
  return h(
    "li",
    { class: "result" },
    h("a", { href: recordingAt(r.recording_id, r.start_ms) }, `${r.recording_id} at ${at}`),
    h("p", { class: "muted" }, [r.speaker, r.recorded_at ? when(r.recorded_at) : null, `score ${r.score.toFixed(3)}`].filter(Boolean).join(" · ")),
    h("blockquote", {}, r.chunk_text),
  );
}
