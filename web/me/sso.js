import { h } from "/dashboard/ui.js";
import { portalApi } from "./api.js";

// Single sign-on on the portal's signed-out page (decision 170): "Sign in with SSO" when the
// server has an identity provider, and the page that says why a sign-in with it was refused.
// The server names the reason by a code (?sso_refused=...); the words are ours, so an address
// someone else made cannot put their text on this page.
const REFUSALS = {
  no_wearer:
    "Your organisation's sign-in worked, but no one here has your email address, or more than one person does. Ask your administrator for a sign-in link.",
  unverified_email:
    "Your identity provider has not verified your email address, so Parley cannot tell that it is yours. Verify it there, or ask your administrator for a sign-in link.",
  no_email: "Your identity provider sent no email address for you, and the portal finds you by it. Ask your administrator for a sign-in link.",
  expired: "This sign-in was already used, started in another browser, or is too old. Start again.",
  cancelled: "Your identity provider did not sign you in.",
  rejected: "Your identity provider's answer failed Parley's checks, so it was not trusted. Start again; if it keeps happening, tell your administrator.",
  unreachable: "Parley cannot reach your identity provider. Try again later, or open the sign-in link your administrator sent you.",
};

/** Why a single sign-on was refused, from the address the server sent the browser to (then taken off it); null when none was. */
export function takeSsoRefusal() {
  const reason = new URLSearchParams(location.search).get("sso_refused");
  if (reason !== null) history.replaceState(null, "", location.pathname + location.hash);
  return reason;
}

/** The words for a refusal's code; an unknown code reads as a failed check. */
export const ssoRefusalText = (reason) => (Object.hasOwn(REFUSALS, reason) ? REFUSALS[reason] : REFUSALS.rejected);

/** Adds "Sign in with SSO" to `view` when the server has an identity provider, unless the page has changed meanwhile. */
export async function offerSso(view) {
  const page = view.firstElementChild;
  const { enabled } = await portalApi("/sso").catch(() => ({ enabled: false }));
  if (!enabled || view.firstElementChild !== page) return;
  view.append(
    h("p", {}, "Or sign in with your organisation's account:"),
    h("p", {}, h("a", { class: "button", href: "/me/api/sso/start", id: "sso-sign-in" }, "Sign in with SSO")),
  );
}
