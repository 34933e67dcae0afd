// The System page's Models table: each engine's configured model, its state by the one rule
// of "installed" (decision 120), and, once the checks ran, whether it really loads; the
// commands are the banner's (components/models-advice.js).
import { importLine, modelsAdvice } from "../../components/models-advice.js";
import { badge, h, statusBadge } from "../../ui.js";
import { table } from "./table.js";

/** The state cell: an installed model whose engine check failed is not shown as fine. */
function state(m, check) {
  if (check?.verdict === "fail" && (m.status === "installed" || m.status === "bundled")) return badge("fails to load", "bad");
  return statusBadge(m.status === "mismatch" ? "not the published model" : m.status);
}

function action(m, check) {
  if (m.install) return h("code", {}, m.install);
  if (check?.verdict === "fail") return check.detail;
  return "—";
}

/** `checks`: the doctor's, by name (null until they ran). */
export function modelsSection(report, checks) {
  const advice = modelsAdvice(report);
  const byName = new Map((checks?.checks ?? []).map((c) => [c.check, c]));
  return h(
    "section",
    { "aria-labelledby": "models-title" },
    h("h2", { id: "models-title" }, "Models"),
    table(
      "Models by engine",
      ["Engine", "Model", "Status", "Install with"],
      report.health.models.map((m) => [m.engine, m.model, state(m, byName.get(m.engine)), action(m, byName.get(m.engine))]),
    ),
    advice.missing.length ? importLine(advice) : null,
  );
}
