// Small shared pieces for pages. Text goes in as text (textContent), never as HTML: API data
// is never parsed as markup.

/**
 * Builds an element: h("a", { href: "#/x", class: "y", onclick: fn }, "text", child, [more]).
 * Attributes set to null, undefined or false are left out; true sets an empty attribute.
 * `value`, `checked`, `disabled`, `selected` and `hidden` are set as properties.
 */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs ?? {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name.startsWith("on") && typeof value === "function") el.addEventListener(name.slice(2).toLowerCase(), value);
    // A box ticked or an option chosen from the start is also the form's default, so form.reset() returns to it.
    else if (name === "checked") el.defaultChecked = el.checked = value;
    else if (name === "selected") el.defaultSelected = el.selected = value;
    else if (["value", "disabled", "hidden"].includes(name)) el[name] = value;
    else el.setAttribute(name, value === true ? "" : String(value));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** A date and time for people, "—" when absent. */
export function when(iso) {
  return iso ? new Date(iso).toLocaleString() : "—";
}

/** A small label; tone "good", "bad", "warn", "busy" (under way) or "" (neutral). */
export function badge(text, tone = "") {
  return h("span", { class: `badge ${tone}`.trim() }, text);
}

const GOOD = new Set(["completed", "bound", "uploaded", "executed", "applied", "succeeded", "enabled", "delivered", "online", "ok", "installed", "live"]);
const BAD = new Set(["failed", "integrity_failure", "expired", "dead", "disabled", "revoked", "offline", "missing", "rejected", "error"]);
const BUSY = new Set(["pending", "processing", "streaming", "queued", "running", "delivering", "generating"]);

/** A status word coloured by what it means: green when done well, red when failed, blue while under way, grey otherwise. */
export function statusBadge(status) {
  return badge(status ?? "—", GOOD.has(status) ? "good" : BAD.has(status) ? "bad" : BUSY.has(status) ? "busy" : "");
}

/**
 * Asks a yes/no question in a modal dialog; resolves true when confirmed. The confirming
 * button's label is `confirmLabel` (say what it does: "Revoke", "Delete").
 */
export function confirmDialog(message, confirmLabel = "Confirm") {
  return new Promise((resolve) => {
    const dialog = h("dialog", { class: "confirm", "aria-label": "Confirm" });
    let answer = false;
    const close = (confirmed) => {
      answer = confirmed;
      dialog.close();
    };
    // Escape closes it too (as Cancel); either way it leaves the page.
    dialog.addEventListener("close", () => {
      dialog.remove();
      resolve(answer);
    });
    dialog.append(
      h("p", {}, message),
      h(
        "div",
        { class: "actions" },
        h("button", { type: "button", onclick: () => close(false) }, "Cancel"),
        h("button", { type: "button", class: "danger", onclick: () => close(true) }, confirmLabel),
      ),
    );
    document.body.append(dialog);
    dialog.showModal();
  });
}

/**
 * Shows an API error on a form: beside the field the error names (its `param`), marked
 * invalid, or else in the form's alert line. Clears earlier messages first.
 */
export function showFormError(form, error) {
  for (const old of form.querySelectorAll(".field-error")) old.remove();
  for (const bad of form.querySelectorAll("[aria-invalid]")) bad.removeAttribute("aria-invalid");
  let alert = form.querySelector(".form-error");
  if (!alert) form.append((alert = h("p", { class: "form-error error", role: "alert" })));
  alert.textContent = "";
  if (!error) return;
  const field = error.param && form.querySelector(`[name="${CSS.escape(error.param)}"]`);
  if (field) {
    const id = `${field.name}-error`;
    field.setAttribute("aria-invalid", "true");
    field.setAttribute("aria-describedby", id);
    // A group of boxes (scopes) takes the message after the group, a lone field after its label.
    const anchor = (field.type === "checkbox" || field.type === "radio" ? field.closest("fieldset") : null) ?? field.closest("label") ?? field;
    anchor.after(h("p", { class: "field-error error", id }, error.message));
  } else alert.textContent = error.message;
}

/** A button that copies `text` to the clipboard and says so. */
export function copyButton(text, label = "Copy") {
  const button = h("button", { type: "button" }, label);
  button.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(text);
      button.textContent = "Copied";
    } catch {
      button.textContent = "Select and copy by hand";
    }
  });
  return button;
}
