// Keys: API keys of the selected project and mode. Made and revoked here only (spec 5 rule 2),
// through the session API; a new key is shown in full once, then only by its hint.
import { adminApi, api, ApiError } from "../api.js";
import { badge, confirmDialog, copyButton, h, showFormError, statusBadge, when } from "../ui.js";

const TYPES = [
  ["secret", "Secret", "every scope, for your servers"],
  ["restricted", "Restricted", "only the scopes ticked below"],
  ["end_user", "End user", "confined to one end user's data"],
];

function typeOf(key) {
  const kind = key.scopes ? "restricted" : "secret";
  return key.end_user_id ? `${kind}, end user ${key.end_user_id}` : kind;
}

function createForm(scopes, endUsers, onCreated) {
  const scopeBoxes = h("fieldset", { class: "scopes" }, h("legend", {}, "Scopes"), scopes.map((s) => h("label", {}, h("input", { type: "checkbox", name: "scope", value: s }), s)));
  const endUserField = h(
    "label",
    {},
    "End user",
    h("select", { name: "end_user_id", "aria-label": "End user" }, h("option", { value: "" }, "Choose an end user"), endUsers.map((u) => h("option", { value: u.id }, `${u.name ?? u.external_id ?? u.id} (${u.id})`))),
  );
  const form = h(
    "form",
    { class: "card", "aria-labelledby": "create-key-title" },
    h("h2", { id: "create-key-title" }, "Create a key"),
    h("fieldset", {}, h("legend", {}, "Type"), TYPES.map(([value, label, help], i) => h("label", {}, h("input", { type: "radio", name: "type", value, checked: i === 0 }), `${label} `, h("span", { class: "muted" }, `(${help})`)))),
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
    if (type === "end_user" && !form.elements.end_user_id.value) return showFormError(form, { param: "end_user_id", message: "Choose the end user this key is confined to." });
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

function keysTable(keys, onRevoke) {
  if (!keys.length) return h("p", { class: "muted" }, "No keys in this project and mode yet.");
  const row = (k) =>
    h(
      "tr",
      {},
      h("td", {}, h("code", {}, k.hint)),
      h("td", {}, k.name ?? "—"),
      h("td", {}, typeOf(k)),
      h("td", {}, k.scopes ? k.scopes.join(", ") : "all"),
      h("td", {}, when(k.created_at)),
      h("td", {}, k.revoked_at ? statusBadge("revoked") : badge("active", "good")),
      h("td", {}, k.revoked_at ? "" : h("button", { type: "button", "aria-label": `Revoke ${k.hint}`, onclick: () => onRevoke(k) }, "Revoke")),
    );
  return h(
    "div",
    { class: "table-wrap" },
    h("table", {}, h("caption", { class: "muted" }, "Keys by hint"), h("thead", {}, h("tr", {}, ["Key", "Name", "Type", "Scopes", "Created", "Status", ""].map((t) => h("th", { scope: "col" }, t)))), h("tbody", {}, keys.map(row))),
  );
}

export async function render(view, ctx) {
  const tenant = ctx.session.tenant;
  const [keys, endUsers] = await Promise.all([adminApi("/keys"), api("/end-users", { query: { limit: 100 } }).catch(() => ({ data: [] }))]);
  if (ctx.signal.aborted) return; // left while loading: the next page owns the view
  const newKey = h("div", { "aria-live": "polite" });
  const list = h("section", { "aria-labelledby": "keys-title" });
  const reload = async () => {
    const fresh = await adminApi("/keys");
    list.replaceChildren(h("h2", { id: "keys-title" }, "Existing keys"), keysTable(fresh.data, revoke));
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
  list.replaceChildren(h("h2", { id: "keys-title" }, "Existing keys"), keysTable(keys.data, revoke));
}
