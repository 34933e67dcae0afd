import { h } from "/dashboard/ui.js";
import { portalApi, setCsrfToken } from "./api.js";
import { offerSso, ssoRefusalText, takeSsoRefusal } from "./sso.js";

// The wearer's portal (decision 147): a small app of three pages over the real /v1 API,
// acting with the powers of a key confined to the signed-in end user.
const view = document.getElementById("view");
const nav = document.getElementById("nav");
const signOut = document.getElementById("sign-out");

const PAGES = [
  [/^#\/r\/([^?]+)/, () => import("./recording.js")],
  [/^#\/search/, () => import("./library.js").then((m) => ({ render: m.renderSearch }))],
  [/^#\/ask/, () => import("./ask.js")],
  [/^/, () => import("./library.js")],
];

let session = null;
let controller = null;

if ("serviceWorker" in navigator) navigator.serviceWorker.register("/me/sw.js", { scope: "/me" }).catch(() => {});

/** A page of its own, with a heading and a message: the refused link, the signed-out state. */
function notice(title, message, tone = "muted") {
  nav.hidden = true;
  signOut.hidden = true;
  document.getElementById("who").textContent = "";
  view.replaceChildren(h("h1", {}, title), h("p", { class: tone, role: tone === "error" ? "alert" : "status" }, message));
  document.title = `${title} · Parley`;
}

/** The signed-out page: `message`, and "Sign in with SSO" where the server offers it. */
function signedOut(title, message, tone) {
  notice(title, message, tone);
  offerSso(view);
}

/** /me/invite#TOKEN: spends the link (once) and opens the portal; the token leaves the address bar at once. */
async function redeem() {
  const token = decodeURIComponent(location.hash.slice(1));
  history.replaceState(null, "", "/me/invite");
  if (!token) return notice("This link cannot sign you in", "The sign-in link is incomplete: open the whole link your administrator sent you.", "error");
  try {
    await portalApi("/invite", { method: "POST", body: { token } });
    location.replace("/me#/");
  } catch (err) {
    notice("This link cannot sign you in", err.message, "error");
  }
}

async function route() {
  if (!session) return;
  controller?.abort();
  controller = new AbortController();
  const hash = location.hash || "#/";
  const [pattern, load] = PAGES.find(([p]) => p.test(hash));
  const match = hash.match(pattern);
  const query = new URLSearchParams(hash.split("?")[1] ?? "");
  for (const a of nav.querySelectorAll("a")) {
    const here = a.getAttribute("href") === "#/" ? pattern === PAGES[3][0] : hash.startsWith(a.getAttribute("href"));
    if (here) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
  const ctx = { session, query, id: match[1] ? decodeURIComponent(match[1]) : null, signal: controller.signal, navigate: (to) => (location.hash = to) };
  try {
    const page = await load();
    await page.render(view, ctx);
    if (!ctx.signal.aborted) view.focus({ preventScroll: true });
  } catch (err) {
    if (!ctx.signal.aborted) view.replaceChildren(h("h1", {}, "Something went wrong"), h("p", { class: "error", role: "alert" }, err.message));
  }
}

async function start() {
  if (location.pathname === "/me/invite") return redeem();
  const refusal = takeSsoRefusal();
  try {
    session = await portalApi("/session");
  } catch (err) {
    if (err.status === 401 && refusal) return signedOut("Single sign-on did not sign you in", ssoRefusalText(refusal), "error");
    if (err.status === 401) return signedOut("Signed out", "Open the sign-in link your administrator sent you to see your conversations.");
    return notice("Parley is out of reach", err.message, "error");
  }
  setCsrfToken(session.csrf_token);
  nav.hidden = false;
  signOut.hidden = false;
  document.getElementById("who").textContent = session.end_user.name ?? session.end_user.email ?? "";
  addEventListener("hashchange", route);
  await route();
}

signOut.addEventListener("click", async () => {
  await portalApi("/session", { method: "DELETE" }).catch(() => {});
  session = null;
  signedOut("Signed out", "You have signed out. Open a new sign-in link to come back.");
});
addEventListener("portal:unauthorized", () => {
  session = null;
  signedOut("Signed out", "Your session has ended. Open a new sign-in link to come back.");
});

start();
