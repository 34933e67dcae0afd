import { h } from "../ui.js";

// Labelled form fields whose error slot sits beside the control, so an API validation
// error (its `param`, e.g. settings.upload.streaming_chunk_kb) shows where it belongs.
let counter = 0;

/**
 * A label, a control and its error slot. `param` is the API's name for the field: an
 * ApiError whose param starts with it lands here (see showError).
 */
export function field(label, control, { param, hint } = {}) {
  const id = control.id || `f${++counter}`;
  control.id = id;
  const error = h("span", { class: "field-error", id: `${id}-error` });
  const described = [`${id}-error`];
  const parts = [];
  if (hint) {
    parts.push(h("span", { class: "muted hint", id: `${id}-hint` }, hint));
    described.push(`${id}-hint`);
  }
  control.setAttribute("aria-describedby", described.join(" "));
  const checkbox = control.type === "checkbox";
  const wrap = h(
    "div",
    { class: checkbox ? "field check" : "field" },
    ...(checkbox ? [control, h("label", { for: id }, label)] : [h("label", { for: id }, label), control]),
    ...parts,
    error,
  );
  if (param) wrap.dataset.param = param;
  return wrap;
}

export const textInput = (name, value = "", attrs = {}) => h("input", { type: "text", name, value: value ?? "", ...attrs });
// Text, not type=number: the browser would turn what it cannot parse into "", and the API
// (not the browser) should say what is wrong with the value.
export const numberInput = (name, value, attrs = {}) => h("input", { type: "text", name, value: value ?? "", autocomplete: "off", ...attrs });

/** A number field's value as typed: what does not parse goes as text, for the API to name the problem. */
export function typedNumber(value) {
  const v = String(value).trim();
  return v !== "" && Number.isFinite(Number(v)) ? Number(v) : v;
}

export function checkbox(name, checked) {
  return h("input", { type: "checkbox", name, checked: Boolean(checked) });
}

export function select(name, options, value) {
  const el = h("select", { name }, ...options.map((o) => (Array.isArray(o) ? h("option", { value: o[0] }, o[1]) : h("option", { value: o }, o))));
  if (value !== undefined && value !== null) el.value = String(value);
  return el;
}

/** Clears every error slot in `form` and its form-level alert. */
export function clearErrors(form) {
  for (const slot of form.querySelectorAll(".field-error")) slot.textContent = "";
  for (const control of form.querySelectorAll("[aria-invalid]")) control.removeAttribute("aria-invalid");
  const alert = form.querySelector(".form-error");
  if (alert) alert.textContent = "";
}

/**
 * Shows an API error beside the field it names (the longest data-param that prefixes
 * err.param), or in the form's own alert when it names none.
 */
export function showError(form, err) {
  clearErrors(form);
  const param = err.param ?? "";
  const fields = [...form.querySelectorAll("[data-param]")].filter((f) => param === f.dataset.param || param.startsWith(`${f.dataset.param}.`));
  const target = fields.sort((a, b) => b.dataset.param.length - a.dataset.param.length)[0];
  if (target) {
    target.querySelector(".field-error").textContent = err.message;
    target.querySelector("input, select, textarea")?.setAttribute("aria-invalid", "true");
    return;
  }
  let alert = form.querySelector(".form-error");
  if (!alert) {
    alert = h("p", { class: "form-error error", role: "alert" });
    form.append(alert);
  }
  alert.textContent = err.message ?? String(err);
}

/** A form-level alert element for messages that belong to no field. */
export const formAlert = () => h("p", { class: "form-error error", role: "alert" });
