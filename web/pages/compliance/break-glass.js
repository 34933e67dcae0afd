import { endUserSelect } from "../../components/end-user-select.js";
import { field, formAlert, showError, textInput } from "../../components/fields.js";
import { renderTable } from "../../components/table.js";
import { adminApi } from "../../api.js";
import { confirmDialog, h, statusBadge, when } from "../../ui.js";

// Break-glass (issue 32, decision 137): a compliance officer, or a viewer on a support case,
// who must see one person's content opens it here with a reason, for a while; every read
// then carries that reason in the audit log. The list is the record: open, closed or
// expired, who and why. The server decides who may do what; this page only follows it.

/** The roles that read content only through break-glass; owners and admins see it already. */
const OPENS = new Set(["compliance", "viewer"]);

/** The Compliance page's break-glass section: the record of grants, and for those who need one, the form to open one. */
export async function breakGlassSection(ctx) {
  const me = ctx.session.admin;
  const list = h("div", {});
  async function reload() {
    const { data } = await adminApi("/break-glass");
    list.replaceChildren(
      data.length
        ? renderTable("Break-glass grants", columns, data)
        : h("p", { class: "muted" }, "No break-glass yet: nobody without access to content has opened any."),
    );
  }
  const columns = [
    // While open, the end user's page leads to their recordings and transcripts.
    { title: "End user", cell: (g) => h("a", { href: `#/end-users/${encodeURIComponent(g.end_user_id)}` }, h("code", { class: "ids" }, g.end_user_id)) },
    { title: "Who", cell: (g) => g.admin.email },
    { title: "Why", cell: (g) => g.reason },
    { title: "Status", cell: (g) => statusBadge(g.status) },
    { title: "Opened", cell: (g) => when(g.opened_at) },
    {
      title: "Until",
      cell: (g) =>
        g.status === "open" && (g.admin.id === me.id || me.role === "owner")
          ? h("button", { type: "button", onclick: () => close(g) }, `Close break-glass for ${g.end_user_id}`)
          : g.closed_at
            ? `closed ${when(g.closed_at)} by ${g.closed_by}`
            : when(g.expires_at),
    },
  ];
  async function close(grant) {
    if (!(await confirmDialog(`Close break-glass for ${grant.end_user_id}? Their content is closed to ${grant.admin.email} again.`, "Close"))) return;
    await adminApi(`/break-glass/${encodeURIComponent(grant.id)}`, { method: "DELETE" });
    await reload();
  }
  await reload();
  return h(
    "section",
    { "aria-labelledby": "break-glass-h" },
    h("h2", { id: "break-glass-h" }, "Break-glass"),
    h(
      "p",
      { class: "muted" },
      "Opens one end user's audio, transcripts, summaries, search and Ask to the person who opens it, for a limited time. The reason is recorded with every read.",
    ),
    list,
    OPENS.has(me.role) ? await openForm(ctx, reload) : null,
  );
}

/**
 * Compliance picks the end user from the project's list (it may read end users' records); a
 * viewer on a support case may not, so types the id the case gives. A refused recording page
 * links here with its end user already chosen (?end_user_id=).
 */
async function openForm(ctx, reload) {
  const chosen = ctx.query.get("end_user_id") ?? "";
  const endUser =
    ctx.session.admin.role === "compliance"
      ? field("End user", await endUserSelect(ctx.api, chosen), { param: "end_user_id" })
      : field("End user id", textInput("end_user_id", chosen, { autocomplete: "off" }), { param: "end_user_id", hint: "eu_…" });
  const form = h(
    "form",
    { class: "stack", novalidate: "" },
    endUser,
    field("Reason", h("textarea", { name: "reason", rows: 3, maxlength: 500 }), { param: "reason", hint: "10 to 500 characters: the case, ticket or order." }),
    h("button", { type: "submit" }, "Open break-glass"),
    formAlert(),
  );
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const data = new FormData(form);
    try {
      await adminApi("/break-glass", { method: "POST", body: { end_user_id: String(data.get("end_user_id")).trim(), reason: String(data.get("reason")) } });
      form.reset();
      await reload();
    } catch (err) {
      showError(form, err);
    }
  });
  return h("details", { class: "panel", open: chosen !== "" }, h("summary", {}, "Open break-glass for an end user"), form);
}
