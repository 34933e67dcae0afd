import { clockTime, duration } from "/dashboard/components/format.js";
import { h, statusBadge, when } from "/dashboard/ui.js";
import { api, momentLink } from "./api.js";

const PAGE = 20;

/** The wearer's recordings, newest first, each with its status; more on request. */
export async function render(view, ctx) {
  const list = h("ul", { class: "cards", "aria-label": "My recordings" });
  const more = h("button", { type: "button", hidden: true }, "Show older recordings");
  let cursor;
  async function load() {
    const page = await api("/recordings", { query: { limit: PAGE, cursor } });
    if (ctx.signal.aborted) return;
    list.append(...page.data.map(card));
    cursor = page.next_cursor;
    more.hidden = !page.has_more;
    if (!list.children.length) list.replaceWith(h("p", { class: "muted" }, "No recordings yet."));
  }
  more.addEventListener("click", load);
  view.replaceChildren(h("h1", {}, "My recordings"), list, more);
  await load();
}

function card(rec) {
  return h(
    "li",
    { class: "card" },
    h("a", { href: `#/r/${encodeURIComponent(rec.id)}`, class: "card-title" }, rec.name ?? when(rec.recorded_at ?? rec.created_at)),
    // Without a name the title is already the date.
    h("p", { class: "muted" }, statusBadge(rec.status), " ", rec.name ? `${when(rec.recorded_at ?? rec.created_at)} · ` : "", duration(rec.duration_seconds)),
  );
}

/** Search over the wearer's own library: each passage links to its moment in the recording. */
export async function renderSearch(view, ctx) {
  const input = h("input", { type: "search", name: "q", id: "search-q", required: true, value: ctx.query.get("q") ?? "" });
  const form = h(
    "form",
    { role: "search", class: "row" },
    h("label", { for: "search-q", class: "sr-only" }, "Search my recordings"),
    input,
    h("button", { type: "submit" }, "Search"),
  );
  const results = h("div", { "aria-live": "polite" });
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    ctx.navigate(`#/search?q=${encodeURIComponent(input.value)}`);
  });
  view.replaceChildren(h("h1", {}, "Search"), form, results);
  const q = ctx.query.get("q");
  if (!q) return;
  const { results: hits } = await api("/recordings/search", { method: "POST", body: { query: q, limit: 20 } });
  if (ctx.signal.aborted) return;
  results.replaceChildren(
    hits.length
      ? h(
          "ol",
          { class: "cards", "aria-label": "Search results" },
          ...hits.map((hit) =>
            h(
              "li",
              { class: "card" },
              h("a", { href: momentLink(hit.recording_id, hit.start_ms) }, `▶ ${when(hit.recorded_at)} at ${clockTime(hit.start_ms / 1000)}`),
              h("p", {}, hit.speaker ? `${hit.speaker}: ` : "", hit.chunk_text),
            ),
          ),
        )
      : h("p", { class: "muted" }, "Nothing found."),
  );
}
