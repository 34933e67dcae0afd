import "../components/stylesheet.js";
import { actorLabel } from "../components/actor.js";
import { facts } from "../components/facts.js";
import { renderTable } from "../components/table.js";
import { h, when } from "../ui.js";

// One end user's accounting of disclosures (HIPAA 164.528, decision 140): who read or
// exported their content, when, with which key or session, and why. A document to print
// or hand over, so every disclosure is on the one page (print CSS hides the shell), and a
// CSV the server builds for a spreadsheet.

/** What each disclosing action means, in a reader's words. */
const ACTIONS = {
  "recording.audio.read": "Audio played or downloaded",
  "transcription.read": "Transcript read",
  "transcription.redacted.read": "Redacted transcript read",
  "summary.read": "Summary read",
  "summary.redacted.read": "Redacted summary read",
  "search.results.read": "Search results read",
  "ask.context.read": "Passages given to Ask",
  "ask.messages.read": "Ask conversation read",
  "export.create": "Export made",
  "export.download": "Export downloaded",
};

/** Every disclosure of the end user, newest first, a page of the API at a time. */
async function allDisclosures(ctx, id) {
  const all = [];
  let cursor;
  do {
    const page = await ctx.api(`/end-users/${encodeURIComponent(id)}/disclosures`, { query: { limit: 100, cursor } });
    all.push(...page.data);
    cursor = page.has_more ? page.next_cursor : undefined;
  } while (cursor && !ctx.signal.aborted);
  return all;
}

export async function render(view, ctx) {
  const [user, disclosures] = await Promise.all([ctx.api(`/end-users/${encodeURIComponent(ctx.id)}`), allDisclosures(ctx, ctx.id)]);
  if (ctx.signal.aborted) return;
  const name = user.name ?? user.external_id ?? user.id;
  const csv = ctx.apiUrl(`/end-users/${encodeURIComponent(user.id)}/disclosures`, { format: "csv" });
  view.replaceChildren(
    h(
      "article",
      { class: "printable" },
      h("p", { class: "back no-print" }, h("a", { href: `#/end-users/${encodeURIComponent(user.id)}` }, `← ${name}`)),
      h("h1", {}, `Disclosures of ${name}`),
      facts([
        ["End user", user.id],
        ["External id", user.external_id],
        ["Disclosures", String(disclosures.length)],
        ["As of", when(new Date().toISOString())],
      ]),
      h(
        "p",
        { class: "actions no-print" },
        h("a", { href: csv, download: `disclosures-${user.id}.csv`, class: "button" }, "Download CSV"),
        h("button", { type: "button", onclick: () => window.print() }, "Print"),
      ),
      disclosures.length
        ? renderTable("Disclosures", COLUMNS, disclosures)
        : h("p", { class: "muted" }, "No one has read or exported this end user's content."),
    ),
  );
}

const COLUMNS = [
  { title: "When", cell: (d) => when(d.created_at) },
  { title: "What", cell: (d) => ACTIONS[d.action] ?? d.action },
  { title: "Who", cell: (d) => actorLabel(d.actor) },
  { title: "Credential", cell: (d) => h("code", {}, d.credential_id ?? "—") },
  { title: "Reason", cell: (d) => d.reason ?? "—" },
  { title: "Resources", cell: (d) => h("span", { class: "ids" }, d.resource_ids.join(", ")) },
  { title: "Request", cell: (d) => h("code", {}, d.request_id ?? "—") },
];
