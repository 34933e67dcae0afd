import "../components/stylesheet.js";
import { endUserSelect } from "../components/end-user-select.js";
import { field, formAlert, showError, textInput } from "../components/fields.js";
import { clockTime, recordingAt } from "../components/format.js";
import { nameBook } from "../components/names.js";
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
    const names = nameBook(ctx.api);
    await names.load(found.results.map((r) => ({ recording_id: r.recording_id })));
    results.replaceChildren(
      h("h2", {}, `${found.results.length} result${found.results.length === 1 ? "" : "s"}`),
      found.results.length
        ? h("ol", { class: "results" }, ...found.results.map((r) => result(r, names)))
        : h("p", { class: "muted", role: "status" }, ...(await whyNothing(ctx, endUser, q))),
    );
  } catch (err) {
    showError(form, err);
  }
}

/**
 * Why a search found nothing, in the order an operator would check: does this end user
 * have recordings, are any transcribed (and if not, is the transcription model missing),
 * and if so, did the search have meanings to go on or words only (no embedding model).
 */
async function whyNothing(ctx, endUserId, q) {
  const [user, done, any, health] = await Promise.all([
    ctx.api(`/end-users/${encodeURIComponent(endUserId)}`),
    ctx.api("/recordings", { query: { end_user_id: endUserId, status: "completed", limit: 1 } }),
    ctx.api("/recordings", { query: { end_user_id: endUserId, limit: 1 } }),
    ctx.api("/health").catch(() => null),
  ]);
  const who = user.name ?? user.external_id ?? user.id;
  const missing = (engine) => (health?.models ?? []).some((m) => m.engine === engine && m.install);
  const system = h("a", { href: "#/system" }, "System");
  if (!any.data.length)
    return [
      `${who} has no recordings yet, so there is nothing to search: upload one for them on `,
      h("a", { href: `#/recordings?end_user_id=${encodeURIComponent(user.id)}` }, "Recordings"),
      " or bind a device to them.",
    ];
  if (!done.data.length) {
    return missing("transcriber")
      ? [
          `None of ${who}'s recordings has a completed transcript: the transcription model is not installed (see `,
          system,
          "). Install it, then reprocess them.",
        ]
      : [`None of ${who}'s recordings has a completed transcript yet (still processing, or failed): search reads transcripts.`];
  }
  const words = missing("embedder") ? [" The embedding model is not installed, so the search matched words only, not meanings (see ", system, ")."] : [];
  return [`Nothing in ${who}'s transcripts matches “${q}”.`, ...words];
}

function result(r, names) {
  const at = clockTime(r.start_ms / 1000);
  return h(
    "li",
    { class: "result" },
    h("a", { href: recordingAt(r.recording_id, r.start_ms), title: r.recording_id }, `${names.name(r.recording_id)} at ${at}`),
    h("p", { class: "muted" }, [r.speaker, r.recorded_at ? when(r.recorded_at) : null, `score ${r.score.toFixed(3)}`].filter(Boolean).join(" · ")),
    h("blockquote", {}, r.chunk_text),
  );
}
