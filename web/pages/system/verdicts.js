// The System page's verdicts (decision 119): every check carries one (ok, warn, fail) from
// the server, which judges as `parley doctor` and GET /v1/health do; the headline is the
// worst of them and of the live report.
import { badge, h } from "../../ui.js";

const TONE = { ok: "good", warn: "warn", fail: "bad" };
const RANK = { ok: 0, warn: 1, fail: 2 };

export const verdictBadge = (verdict) => badge(verdict, TONE[verdict]);

/** The worst of some verdicts (ok when there are none). */
export const worst = (verdicts) => verdicts.reduce((a, b) => (RANK[b] > RANK[a] ? b : a), "ok");

/** The live report's own verdict: GET /v1/health's status, said as a verdict. */
export const healthVerdict = (health) => (health.status === "ok" ? "ok" : "fail");

/** The doctor's checks, each with its verdict. */
export function checksList(checks) {
  return h(
    "ul",
    { class: "checks" },
    checks.map((c) => h("li", {}, verdictBadge(c.verdict), " ", h("strong", {}, c.check), ": ", c.detail)),
  );
}

/** "Status fail", "Status warn" ..., or "checking" until the checks have run. */
export function headline(health, checks) {
  const verdict = checks ? worst([checks.verdict, healthVerdict(health)]) : null;
  return h("span", { id: "system-status" }, "Status ", verdict ? verdictBadge(verdict) : badge("checking…"));
}
