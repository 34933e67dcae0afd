// Keys: API keys of the selected project and mode. Made and revoked here only (spec 5 rule 2),
// through the session API; a new key is shown in full once, then only by its hint.
import { adminApi, api, ApiError } from "../api.js";
import "../components/stylesheet.js";
import { renderTable } from "../components/table.js";
import { badge, confirmDialog, copyButton, h, showFormError, statusBadge, when } from "../ui.js";

const TYPES = [
  ["secret", "Secret", "every scope, for your servers"],
  ["restricted", "Restricted", "only the scopes ticked below"],
  ["end_user", "End user", "confined to one end user's data"],
];

/** The key's kind, and for an end-user key whose: by name when the end user is among those listed. */
function typeOf(key, endUsers) {
  const kind = key.scopes ? "restricted" : "secret";
  if (!key.end_user_id) return kind;
  const who = endUsers.find((u) => u.id === key.end_user_id);
  return `${kind}, end user ${who?.name ?? who?.external_id ?? key.end_user_id}`;
}

function createForm(scopes, endUsers, onCreated) {
  const scopeBoxes = h(
    "fieldset",
    { class: "scopes" },
    h("legend", {}, "Scopes"),
    scopes.map((s) => h("label", {}, h("input", { type: "checkbox", name: "scope", value: s }), s)),
  );
  // An end-user key needs an end user to be confined to: with none yet, say where they are made.
  const endUserField = h(
    "div",
    { class: "stack" },
    h(
      "label",
      {},
      "End user",
      h(
        "select",
        { name: "end_user_id", "aria-label": "End user", "aria-describedby": endUsers.length ? null : "no-end-users" },
        h("option", { value: "" }, endUsers.length ? "Choose an end user" : "No end users yet"),
        endUsers.map((u) => h("option", { value: u.id }, `${u.name ?? u.external_id ?? u.id} (${u.id})`)),
      ),
    ),
    endUsers.length
      ? null
      : h(
          "p",
          { class: "hint muted", id: "no-end-users" },
          "This project has no end users in this mode yet: ",
          h("a", { href: "#/end-users" }, "create one on End users"),
          " first, then come back for its key.",
        ),
  );
  const form = h(
    "form",
    { class: "card", "aria-labelledby": "create-key-title" },
    h("h2", { id: "create-key-title" }, "Create a key"),
    h(
      "fieldset",
      {},
      h("legend", {}, "Type"),
      TYPES.map(([value, label, help], i) =>
        h("label", {}, h("input", { type: "radio", name: "type", value, checked: i === 0 }), `${label} `, h("span", { class: "muted" }, `(${help})`)),
      ),
    ),
    scopeBoxes,
    endUserField,
    h("label", {}, "Name (optional)", h("input", { name: "name", maxlength: 200, autocomplete: "off", placeholder: "e.g. clinic EHR bridge" })),
    h("div", { class: "actions" }, h("button", { type: "submit" }, "Create key")),
  );
  const showFields = () => {
    const type = form.elements.type.value;
    scopeBoxes.hidden = type !== "restricted";
    endUserField.hidden = type !== "end_user";
  };
  form.addEventListener("change", showFields);
  showFields();
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    showFormError(form, null);
    const type = form.elements.type.value;
    const ticked = [...form.querySelectorAll("input[name=scope]:checked")].map((c) => c.value);
    if (type === "restricted" && !ticked.length) return showFormError(form, { param: "scope", message: "Tick at least one scope." });
    if (type === "end_user" && !form.elements.end_user_id.value)
      return showFormError(form, { param: "end_user_id", message: "Choose the end user this key is confined to." });
    const body = {
      kind: type === "restricted" ? "restricted" : "secret",
      scopes: type === "restricted" ? ticked : undefined,
      end_user_id: type === "end_user" ? form.elements.end_user_id.value : undefined,
      name: form.elements.name.value.trim() || undefined,
    };
    try {
      const key = await adminApi("/keys", { method: "POST", body });
      form.reset();
      showFields();
      onCreated(key);
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      showFormError(form, err.param === "scopes" ? { ...err, message: err.message, param: "scope" } : err);
    }
  });
  return form;
}

/** The new key, in full, once: it is in this page's memory only and gone when the page is left or reloaded. */
function shownOnce(key, onDone) {
  const panel = h(
    "section",
    { class: "secret", "aria-labelledby": "new-key-title" },
    h("h2", { id: "new-key-title" }, "Your new key"),
    h("p", {}, "Copy it now: it is shown only this once. Later it appears only by its hint."),
    h("code", { "aria-label": "New key" }, key.key),
    h("div", { class: "actions" }, copyButton(key.key, "Copy key"), h("button", { type: "button", onclick: onDone }, "Done")),
  );
  return panel;
}

function keysTable(keys, endUsers, onRevoke) {
  if (!keys.length) return h("p", { class: "muted" }, "No keys in this project and mode yet.");
  const columns = [
    { title: "Key", cell: (k) => h("code", {}, k.hint) },
    { title: "Name", cell: (k) => k.name ?? "—" },
    { title: "Type", cell: (k) => typeOf(k, endUsers) },
    { title: "Scopes", cell: (k) => (k.scopes ? k.scopes.join(", ") : "all") },
    { title: "Created", cell: (k) => when(k.created_at) },
    { title: "Status", cell: (k) => (k.revoked_at ? statusBadge("revoked") : badge("active", "good")) },
    { title: "", cell: (k) => (k.revoked_at ? "" : h("button", { type: "button", "aria-label": `Revoke ${k.hint}`, onclick: () => onRevoke(k) }, "Revoke")) },
  ];
  return h("div", { class: "table-wrap" }, renderTable("Keys by hint", columns, keys));
}

export async function render(view, ctx) {
  const tenant = ctx.session.tenant;
  const [keys, endUsers] = await Promise.all([adminApi("/keys"), api("/end-users", { query: { limit: 100 } }).catch(() => ({ data: [] }))]);
  if (ctx.signal.aborted) return; // left while loading: the next page owns the view
  const newKey = h("div", { "aria-live": "polite" });
  const list = h("section", { "aria-labelledby": "keys-title" });
  const reload = async () => {
    const fresh = await adminApi("/keys");
    list.replaceChildren(h("h2", { id: "keys-title" }, "Existing keys"), keysTable(fresh.data, endUsers.data, revoke));
  };
  const revoke = async (key) => {
    if (!(await confirmDialog(`Revoke ${key.hint}? Whatever uses it is refused from now on.`, "Revoke"))) return;
    await adminApi(`/keys/${encodeURIComponent(key.id)}`, { method: "DELETE" });
    await reload();
  };
  view.append(
    h("h1", {}, "Keys"),
    h("p", {}, `API keys of project ${tenant.project_name} in ${tenant.mode} mode. Keys act in their project and mode only; switch above for the other.`),
    newKey,
    createForm(keys.scopes, endUsers.data, async (key) => {
      newKey.replaceChildren(shownOnce(key, () => newKey.replaceChildren()));
      newKey.querySelector("code").scrollIntoView({ block: "nearest" });
      await reload();
    }),
    list,
  );
  list.replaceChildren(h("h2", { id: "keys-title" }, "Existing keys"), keysTable(keys.data, endUsers.data, revoke));
}
