// What installs the models that are not installed, for the models banner and the System
// page's Models table alike (decision 121). The commands come from the server's one advice
// function, said as parley runs on the appliance: `npm run parley -- ...` in a checkout,
// `parley ...` from the executable or the container.
import { h } from "../ui.js";

/** From the System report (GET /dashboard/api/system): the models to install, each with its command, and the air-gapped alternative. */
export function modelsAdvice(report) {
  return { missing: report.health.models.filter((m) => m.install), importCommand: report.import_command };
}

/** The air-gapped alternative, one paragraph. */
export function importLine(advice) {
  return h("p", {}, "On an air-gapped machine: ", h("code", {}, advice.importCommand), ", from a folder copied from one that pulled them.");
}

/** The banner's paragraphs: what is missing and what it costs, each command, the alternative. */
export function adviceParagraphs(advice) {
  return [
    h("p", {}, "Models not installed: transcripts, summaries, search and Ask need them; everything else works. On the appliance run:"),
    ...advice.missing.map((m) => h("p", {}, h("code", {}, m.install), ` (${m.engine})`)),
    importLine(advice),
  ];
}
