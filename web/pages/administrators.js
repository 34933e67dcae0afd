// Administrators: the people who sign in to this dashboard, and their roles (issue 32,
// decision 136). Owners only; the server refuses everyone else whatever this page shows,
// and refuses to demote or remove the last owner.
import { adminApi } from "../api.js";
import { field, formAlert, select, showError, textInput } from "../components/fields.js";
import { renderTable } from "../components/table.js";
import { confirmDialog, h, when } from "../ui.js";

const ROLES = [
  ["owner", "Owner: everything, including administrators and projects"],
  ["admin", "Admin: keys, devices, end users, webhooks, configuration, content"],
  ["compliance", "Compliance: audit log, holds, retention, exports; content only through break-glass"],
  ["viewer", "Viewer: devices and the System page; no content"],
];

export async function render(view, ctx) {
  const me = ctx.session.admin;
  const list = h("div", {});
  const alert = formAlert();
  async function reload() {
    const { data } = await adminApi("/administrators");
    list.replaceChildren(renderTable("Administrators", columns, data));
  }
  const columns = [
    { title: "Email", cell: (a) => (a.id === me.id ? `${a.email} (you)` : a.email) },
    { title: "Role", cell: (a) => roleSelect(a) },
    { title: "Since", cell: (a) => when(a.created_at) },
    { title: "", cell: (a) => h("button", { type: "button", onclick: () => remove(a) }, `Remove ${a.email}`) },
  ];
  function roleSelect(admin) {
    const control = select(
      "role",
      ROLES.map(([value]) => [value, value]),
      admin.role,
    );
    control.setAttribute("aria-label", `Role of ${admin.email}`);
    control.addEventListener("change", async () => {
      alert.textContent = "";
      try {
        await adminApi(`/administrators/${encodeURIComponent(admin.id)}`, { method: "PATCH", body: { role: control.value } });
      } catch (err) {
        alert.textContent = err.message;
      }
      await reload();
    });
    return control;
  }
  async function remove(admin) {
    if (!(await confirmDialog(`Remove ${admin.email}? Their sessions end at once.`, "Remove"))) return;
    alert.textContent = "";
    try {
      await adminApi(`/administrators/${encodeURIComponent(admin.id)}`, { method: "DELETE" });
    } catch (err) {
      alert.textContent = err.message;
    }
    await reload();
  }
  await reload();
  if (ctx.signal?.aborted) return;
  view.replaceChildren(
    h("h1", {}, "Administrators"),
    h("p", { class: "muted" }, "Who signs in to this dashboard, and what each may do. A role change takes effect at the person's next click."),
    alert,
    list,
    createForm(reload),
    h(
      "dl",
      { class: "muted" },
      ROLES.flatMap(([role, text]) => [h("dt", {}, role), h("dd", {}, text.split(": ")[1])]),
    ),
  );
}

function createForm(reload) {
  const form = h(
    "form",
    { class: "stack", novalidate: "" },
    field("Email", textInput("email", "", { autocomplete: "off" }), { param: "email" }),
    field("Password", h("input", { type: "password", name: "password", autocomplete: "new-password" }), {
      param: "password",
      hint: "Their first password: tell them, and they can ask for a reset with parley admin reset-password.",
    }),
    field("Role", select("role", ROLES, "viewer"), { param: "role" }),
    h("button", { type: "submit" }, "Add administrator"),
    formAlert(),
  );
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const data = new FormData(form);
    try {
      await adminApi("/administrators", {
        method: "POST",
        body: { email: String(data.get("email")).trim(), password: String(data.get("password")), role: data.get("role") },
      });
      form.reset();
      await reload();
    } catch (err) {
      showError(form, err);
    }
  });
  return h("details", { class: "panel" }, h("summary", {}, "Add an administrator"), form);
}
