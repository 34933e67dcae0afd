import { h } from "../ui.js";

/**
 * A table over one list endpoint, a page at a time, following the API's list envelope
 * ({data, has_more, next_cursor, total}). Cursors already seen are kept so Previous works;
 * reload() re-reads the page on screen (live pages call it from ctx.poll).
 *
 * columns: [{title, cell(row) -> Node|string}]; the first cell usually holds the row's link,
 * so rows are reached by Tab like any link. On a phone each row stacks, cells labelled.
 * prepare(rows), when given, runs before a page is drawn (names.js reads the names its cells show).
 */
export function pagedTable({ api, path, query = {}, columns, caption, empty = "Nothing here yet.", limit = 20, prepare }) {
  const cursors = [undefined];
  let index = 0;
  const body = h("div", { class: "table-wrap" });
  const status = h("span", { class: "muted pager-status", "aria-live": "polite" });
  const prev = h("button", { type: "button" }, "Previous page");
  const next = h("button", { type: "button" }, "Next page");
  const pager = h("div", { class: "pager" }, prev, status, next);
  const el = h("section", { class: "paged", "aria-label": caption }, body, pager);

  async function show(i) {
    const page = await api(path, { query: { ...query, limit, ...(cursors[i] ? { cursor: cursors[i] } : {}) } });
    await prepare?.(page.data);
    index = i;
    cursors.length = i + 1;
    if (page.has_more) cursors.push(page.next_cursor);
    body.replaceChildren(page.data.length ? renderTable(caption, columns, page.data) : h("p", { class: "muted" }, empty));
    prev.disabled = i === 0;
    next.disabled = !page.has_more;
    pager.hidden = i === 0 && !page.has_more;
    const where = `Page ${i + 1}${typeof page.total === "number" ? ` · ${page.total} in all` : ""}`;
    if (status.textContent !== where) status.textContent = where; // a reload that changes nothing says nothing
    return page;
  }
  prev.addEventListener("click", () => show(index - 1));
  next.addEventListener("click", () => show(index + 1));
  return { el, load: () => show(0), reload: () => show(index) };
}

export function renderTable(caption, columns, rows) {
  return h(
    "table",
    {},
    caption ? h("caption", { class: "visually-hidden" }, caption) : null,
    h("thead", {}, h("tr", {}, ...columns.map((c) => h("th", { scope: "col" }, c.title)))),
    h("tbody", {}, ...rows.map((row) => h("tr", {}, ...columns.map((c) => h("td", { "data-label": c.title }, c.cell(row) ?? "—"))))),
  );
}
