// Single sign-on on the sign-in page (decision 143): the "Sign in with SSO" button when the
// server has an identity provider, and the page that says why a sign-in with it was refused.
// The server names the reason by a code (?sso_refused=...); the words are ours, so an address
// someone else made cannot put their text on this page.
const REFUSALS = {
  no_role:
    "Your identity provider signed you in, but none of your groups gives a role in Parley. Ask whoever runs your identity provider to add you to a group that Parley maps to a role.",
  claim_type:
    "Your identity provider sent your groups in a form Parley cannot read (not a list of group names), so no role could be given. Whoever runs the provider must send them as a list.",
  no_email: "Your identity provider sent no email address for you, and a Parley account needs one.",
  account_conflict:
    "An account with your email address already exists here and signs in with a password. Single sign-on does not take it over: sign in with its password, or ask an owner.",
  last_owner:
    "Your identity provider no longer gives you the owner role, but you are this appliance's last owner, so nothing was changed and you were not signed in. Another owner must be named first (parley admin set-role EMAIL owner).",
  expired: "This sign-in was already used, started in another browser, or is too old. Start again.",
  cancelled: "The identity provider did not sign you in.",
  rejected:
    "The identity provider's answer failed Parley's checks (its state, nonce, issuer or audience, or a code used twice), so it was not trusted. Start again; if it keeps happening, tell the appliance's operator.",
  unreachable: "Parley cannot reach the identity provider. Accounts with a password can still sign in.",
};

/** Why a single sign-on was refused, from the address the server sent the browser to (then taken off it); null when none was. */
export function takeSsoRefusal() {
  const reason = new URLSearchParams(location.search).get("sso_refused");
  if (reason !== null) history.replaceState(null, "", location.pathname + location.hash);
  return reason;
}

/** The refusal page, in `gate`, saying why. */
export function showSsoRefused(gate, reason) {
  gate.replaceChildren(document.querySelector("#sso-refused-template").content.cloneNode(true));
  gate.querySelector("#sso-refused-reason").textContent = Object.hasOwn(REFUSALS, reason) ? REFUSALS[reason] : REFUSALS.rejected;
  gate.hidden = false;
}

/** Shows "Sign in with SSO" on the sign-in page when the server has an identity provider (GET /setup's `sso`). */
export function offerSso(enabled) {
  document.querySelector("#sso-sign-in").hidden = !enabled;
}
