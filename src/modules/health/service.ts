import { basename } from "node:path";
import pkg from "../../../package.json";
import type { Deps } from "../../deps";
import { installAdvice, isManifestModel } from "../../model-files/manifest";
import { configuredModelState } from "../../model-files/state";
import { runningCli } from "../../runtime/cli-name";
import { applianceVolumes } from "../../storage";
import { spaceReport } from "../../storage/volumes";
import type { Health } from "./schema";
import { countJobs, databaseAnswers, oldestUnfinishedJob } from "./store";
import { type Check, databaseCheck, diskChecks, modelFilesOk, verdictOf, worstVerdict } from "../../verdicts";

export const VERSION: string = pkg.version;

type ModelReport = Health["models"][number];

/** The setting that names each engine's model: where an operator's own file goes, said without its path. */
const SETTING: Record<ModelReport["engine"], string> = {
  transcriber: "PARLEY_WHISPER_MODEL",
  llm: "PARLEY_LLM_MODEL",
  embedder: "PARLEY_EMBEDDING_MODEL",
  vad: "",
};

/** One configured model by the one rule of "installed" (decision 120); an operator's own file (a path) is named by its file name only. */
function reportModel(modelsDir: string, engine: ModelReport["engine"], name: string): ModelReport {
  const { status } = configuredModelState(modelsDir, name);
  const install = modelFilesOk(status) ? null : installAdvice(name, { cli: runningCli(), where: `the path ${SETTING[engine]} names` });
  return { engine, model: isManifestModel(name) ? name : basename(name), status, install };
}

function models(deps: Deps): ModelReport[] {
  const { modelsDir, models: m } = deps.config;
  return [
    reportModel(modelsDir, "transcriber", m.whisper),
    reportModel(modelsDir, "llm", m.llm),
    reportModel(modelsDir, "embedder", m.embedding),
    reportModel(modelsDir, "vad", "silero-vad"),
  ];
}

function queue(deps: Deps): NonNullable<Health["queue"]> {
  const totals = { queued: 0, running: 0, dead: 0 };
  for (const row of countJobs(deps.db)) totals[row.state as keyof typeof totals] += row.count;
  const oldest = oldestUnfinishedJob(deps.db);
  return { ...totals, oldest_age_seconds: oldest === null ? null : Math.max(0, (deps.clock.now().getTime() - Date.parse(oldest)) / 1000) };
}

/**
 * GET /v1/health (decision 086): what an operator or a monitor needs to see the box is
 * well, without a key. Reads only; a database that fails is reported, not thrown.
 */
export function healthReport(deps: Deps): Health {
  const database = { ok: databaseAnswers(deps.db) };
  const storage = spaceReport(applianceVolumes(deps.config), deps.config.minFreeBytes);
  const installed = models(deps);
  const jobs = database.ok ? queue(deps) : null;
  // Judged as doctor and the System page judge the same things (decision 119): degraded when one of them fails.
  const checks: Check[] = [
    databaseCheck(database.ok),
    ...diskChecks(deps.config),
    ...installed.map((m) => ({ check: m.engine, ok: modelFilesOk(m.status), detail: m.status })),
  ];
  const degraded = worstVerdict(checks.map(verdictOf)) === "fail";
  return { status: degraded ? "degraded" : "ok", version: VERSION, database, storage, models: installed, queue: jobs };
}
