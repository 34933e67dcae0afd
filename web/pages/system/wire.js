// The System page's "is it encrypted on the wire" (decision 104): what `parley doctor`
// reports on TLS, from the System report's `transport`.
import "../../components/stylesheet.js";
import { facts } from "../../components/facts.js";
import { badge, h } from "../../ui.js";

const DAY_MS = 24 * 3600 * 1000;
/** As PARLEY_TLS=auto renews: a certificate this close to its end is flagged. */
const RENEW_DAYS = 30;

function source(t) {
  if (t.certificate_source === "auto") return "auto: self-signed, made by this server (devices pin its fingerprint)";
  if (t.certificate_source === "files") return `files: ${t.certificate_file}`;
  return "none";
}

function expiry(cert) {
  const date = cert.valid_to.slice(0, 10);
  if (cert.expired) return [date, " ", badge("expired", "bad")];
  const days = Math.floor((Date.parse(cert.valid_to) - Date.now()) / DAY_MS);
  return [date, " ", days < RENEW_DAYS ? badge(`in ${days} days`, "warn") : h("span", { class: "muted" }, `(in ${days} days)`)];
}

/** HTTPS or not, the certificate's source, fingerprint and expiry, HSTS, and the doctor's warning when plain HTTP leaves this machine. */
export function wireSection(t) {
  const cert = t.certificate;
  const served = t.https ? badge("HTTPS", "good") : badge("plain HTTP", t.warning ? "bad" : "");
  return h(
    "section",
    { "aria-labelledby": "wire-title" },
    h("h2", { id: "wire-title" }, "Encryption on the wire"),
    t.warning ? h("p", { class: "error", role: "alert" }, badge("warning", "bad"), " ", t.warning) : null,
    t.certificate_error ? h("p", { class: "error", role: "alert" }, `The certificate cannot be read: ${t.certificate_error}`) : null,
    facts([
      ["Served over", served],
      ["Certificate", source(t)],
      ["SHA-256 fingerprint", cert ? h("code", {}, cert.fingerprint_sha256) : null],
      ["SPKI pin", cert ? h("code", {}, `sha256/${cert.spki_sha256}`) : null],
      ["Expires", cert ? expiry(cert) : null],
      ["HSTS", t.hsts ? badge("on", "good") : badge("off")],
      ["Listening on", t.listen],
      ["Public URL", t.public_url],
    ]),
  );
}
