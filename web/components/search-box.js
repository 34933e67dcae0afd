import { h } from "../ui.js";

/**
 * A labelled search field with its button, in a form with role search: Enter or the
 * button calls onSearch with the trimmed text (empty clears the search).
 */
export function searchBox({ label, value = "", button = "Search", hint, onSearch }) {
  const input = h("input", { type: "search", name: "q", value, autocomplete: "off" });
  const id = `search-${label.toLowerCase().replace(/[^a-z0-9]+/g, "-")}`;
  input.id = id;
  const form = h(
    "form",
    { role: "search", class: "search-box" },
    h("label", { for: id }, label),
    h("div", { class: "row" }, input, h("button", { type: "submit" }, button)),
    hint ? h("p", { class: "muted hint" }, hint) : null,
  );
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    onSearch(input.value.trim());
  });
  return form;
}
