import "../components/stylesheet.js";
import { field, formAlert, showError, textInput } from "../components/fields.js";
import { searchBox } from "../components/search-box.js";
import { pagedTable } from "../components/table.js";
import { vocabularyForm } from "../components/vocabulary-form.js";
import { h, when } from "../ui.js";

/** End users: find one by external id (the API's exact, project-scoped match), page through all, add one. */
export async function render(view, ctx) {
  const externalId = ctx.query.get("external_id") ?? "";
  const table = pagedTable({
    api: ctx.api,
    path: "/end-users",
    query: externalId ? { external_id: externalId } : {},
    caption: "End users",
    empty: externalId ? `No end user has the external id “${externalId}”.` : "No end users yet.",
    columns: [
      { title: "Name", cell: (u) => h("a", { href: `#/end-users/${u.id}` }, u.name ?? u.external_id ?? u.id) },
      { title: "External id", cell: (u) => u.external_id ?? "—" },
      { title: "Email", cell: (u) => u.email ?? "—" },
      { title: "Created", cell: (u) => when(u.created_at) },
    ],
  });
  const vocabulary = await vocabularyForm(ctx, "/config/project", { label: "Everyone's terms in this project" });
  if (ctx.signal.aborted) return; // left while loading: the next page owns the view
  view.replaceChildren(
    h("h1", {}, "End users"),
    searchBox({
      label: "Find by external id",
      value: externalId,
      hint: "Your own identifier for the person, matched exactly.",
      onSearch: (q) => ctx.navigate(q ? `#/end-users?external_id=${encodeURIComponent(q)}` : "#/end-users"),
    }),
    table.el,
    createForm(ctx),
    vocabulary ?? "",
  );
  await table.load();
}

function createForm(ctx) {
  const form = h(
    "form",
    { class: "stack", novalidate: "" },
    field("Name", textInput("name", "", { autocomplete: "off" }), { param: "name" }),
    field("External id", textInput("external_id", "", { autocomplete: "off" }), { param: "external_id" }),
    field("Email", h("input", { type: "email", name: "email", autocomplete: "off" }), { param: "email" }),
    h("button", { type: "submit" }, "Add end user"),
    formAlert(),
  );
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const data = new FormData(form);
    const body = Object.fromEntries([...data].filter(([, v]) => String(v).trim() !== "").map(([k, v]) => [k, String(v).trim()]));
    try {
      const user = await ctx.api("/end-users", { method: "POST", body });
      ctx.navigate(`#/end-users/${user.id}`);
    } catch (err) {
      showError(form, err);
    }
  });
  return h("details", { class: "panel" }, h("summary", {}, "Add an end user"), form);
}
