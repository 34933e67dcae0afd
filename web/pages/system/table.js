import { h } from "../../ui.js";

/**
 * A captioned table in its scrolling wrapper, as the System page's sections show them.
 * `rows`: arrays of cell contents, one a column; each cell is labelled with its column's
 * title, which a phone shows beside it when the rows stack.
 */
export function table(caption, head, rows) {
  return h(
    "div",
    { class: "table-wrap" },
    h(
      "table",
      {},
      h("caption", { class: "muted" }, caption),
      h(
        "thead",
        {},
        h(
          "tr",
          {},
          head.map((t) => h("th", { scope: "col" }, t)),
        ),
      ),
      h(
        "tbody",
        {},
        rows.map((cells) =>
          h(
            "tr",
            {},
            cells.map((cell, i) => h("td", { "data-label": head[i] }, cell)),
          ),
        ),
      ),
    ),
  );
}
