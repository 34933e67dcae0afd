// The Parley dashboard's router. Pages are ES modules in pages/, loaded on first visit; each
// exports `render(view, ctx)`. The hash says where we are: #/<page>[/<id>][?query].
import { api, apiUrl } from "./api.js";
import { startSession } from "./session.js";
import { h } from "./ui.js";

const view = document.querySelector("#view");

/** Detail pages: #/devices/<id> renders pages/device.js, and so on. */
const DETAIL_PAGES = { devices: "device", "end-users": "end-user", recordings: "recording" };
const DEFAULT_PAGE = "keys";

/** Parses the hash: page, id (or null) and query. */
export function parseHash(hash = location.hash) {
  const [path, search = ""] = hash.replace(/^#\/?/, "").split("?");
  const [page = "", id = null] = path.split("/").map(decodeURIComponent);
  return { page: page || defaultPage(), id: id || null, query: new URLSearchParams(search) };
}

/** Keys, or for a role that has none the first page its navigation shows. */
function defaultPage() {
  const first = document.querySelector("#nav a:not([hidden])")?.getAttribute("href")?.slice(2);
  return document.querySelector(`#nav a[href="#/${DEFAULT_PAGE}"]`)?.hidden ? first : DEFAULT_PAGE;
}

let leaving = new AbortController();
let session = null;
/** The route on screen, as routeKey() writes it. */
let shownRoute = null;

/** One string per distinct route: "" and "#/keys" are the same page. */
function routeKey({ page, id, query }) {
  return `${page}/${id ?? ""}?${query}`;
}

/** Runs `fn` now and every `ms` until the page is left (or stop() is called); one run at a time. */
function pollFor(signal) {
  return (fn, ms) => {
    let timer = null;
    let stopped = false;
    const stop = () => {
      stopped = true;
      clearTimeout(timer);
    };
    const tick = async () => {
      if (stopped || signal.aborted) return;
      try {
        await fn();
      } catch (err) {
        if (!signal.aborted) console.warn("poll failed", err);
      }
      if (!stopped && !signal.aborted) timer = setTimeout(tick, ms);
    };
    signal.addEventListener("abort", stop, { once: true });
    tick();
    return stop;
  };
}

function markActive(page) {
  for (const a of document.querySelectorAll("#nav a")) {
    if (a.getAttribute("href") !== `#/${page}`) a.removeAttribute("aria-current");
    else {
      a.setAttribute("aria-current", "page");
      // On a phone the navigation scrolls sideways: keep the current page's link in sight
      // (the nav itself scrolls, never the page: this also runs when a page re-renders).
      const nav = a.parentElement;
      nav.scrollLeft = a.offsetLeft - (nav.clientWidth - a.offsetWidth) / 2;
    }
  }
}

/** Renders the page the hash names into <main id="view">; the page before it stops polling. */
async function route({ focus = false } = {}) {
  if (!session) return;
  leaving.abort();
  leaving = new AbortController();
  const signal = leaving.signal;
  const { page, id, query } = parseHash();
  shownRoute = routeKey({ page, id, query });
  markActive(page);
  const file = id && DETAIL_PAGES[page] ? DETAIL_PAGES[page] : page;
  view.replaceChildren(h("p", { class: "muted" }, "Loading…"));
  // The Account page is the administrator's own, in no project: reachable before the first one exists.
  if (!session.tenant && page !== "account") return void renderNoProject();
  let module;
  try {
    if (!/^[a-z-]+$/.test(file)) throw new Error("bad page name");
    module = await import(`./pages/${file}.js`);
  } catch {
    if (!signal.aborted)
      view.replaceChildren(
        h("h1", {}, "Not found"),
        h("p", {}, `There is no page “${page}”.`),
        h("p", {}, h("a", { href: `#/${DEFAULT_PAGE}` }, "Go to Keys")),
      );
    return;
  }
  if (signal.aborted) return;
  const ctx = { id, query, api, apiUrl, session, signal, navigate: (hash) => (location.hash = hash), poll: pollFor(signal), refresh: () => route() };
  try {
    view.replaceChildren();
    await module.render(view, ctx);
    document.title = `${view.querySelector("h1")?.textContent ?? page} · Parley`;
    if (focus) view.focus();
  } catch (err) {
    if (signal.aborted || err?.status === 401) return;
    view.replaceChildren(h("h1", {}, "Something went wrong"), h("p", { class: "error", role: "alert" }, err?.message ?? String(err)));
  }
}

function renderNoProject() {
  view.replaceChildren(
    h("h1", {}, "Create a project"),
    h("p", {}, "Everything in Parley (keys, devices, recordings) belongs to a project, in test or live mode. Make the first one with New project above."),
  );
}

// A hash that names the page already shown (#/keys over the default page) renders nothing again:
// a second render would throw away what the user had started typing in the first.
window.addEventListener("hashchange", () => {
  if (routeKey(parseHash()) !== shownRoute) route({ focus: true });
});

startSession({
  onSignedIn(current) {
    session = current;
    route();
  },
  onSignedOut() {
    session = null;
    leaving.abort();
    view.replaceChildren();
  },
});
