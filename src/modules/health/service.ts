import { existsSync } from "node:fs";
import { basename } from "node:path";
import pkg from "../../../package.json";
import type { Deps } from "../../deps";
import { modelStatus } from "../../model-files/install";
import { defaultManifest, installAdvice, modelFilePath } from "../../model-files/manifest";
import { applianceVolumes } from "../../storage";
import { spaceReport } from "../../storage/volumes";
import type { Health } from "./schema";
import { countJobs, databaseAnswers, oldestUnfinishedJob } from "./store";

export const VERSION: string = pkg.version;

type ModelReport = Health["models"][number];

/** The setting that names each engine's model: where an operator's own file goes, said without its path. */
const SETTING: Record<ModelReport["engine"], string> = { transcriber: "PARLEY_WHISPER_MODEL", llm: "PARLEY_LLM_MODEL", embedder: "PARLEY_EMBEDDING_MODEL", vad: "" };

/** One configured model: manifest models by their files; an operator's own file (a path) by whether it exists, named by its file name only. */
function reportModel(modelsDir: string, engine: ModelReport["engine"], name: string): ModelReport {
  const entry = defaultManifest.models.find((m) => m.name === name);
  const status = entry ? modelStatus({ modelsDir }, entry) : existsSync(modelFilePath(modelsDir, name)) ? "installed" : "missing";
  const install = status === "missing" || status === "partial" ? installAdvice(name, { where: `the path ${SETTING[engine]} names` }) : null;
  return { engine, model: entry ? name : basename(name), status, install };
}

function models(deps: Deps): ModelReport[] {
  const { modelsDir, models: m } = deps.config;
  return [reportModel(modelsDir, "transcriber", m.whisper), reportModel(modelsDir, "llm", m.llm), reportModel(modelsDir, "embedder", m.embedding), reportModel(modelsDir, "vad", "silero-vad")];
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
  const degraded = !database.ok || storage.some((v) => v.low) || installed.some((m) => m.install !== null);
  return { status: degraded ? "degraded" : "ok", version: VERSION, database, storage, models: installed, queue: jobs };
}
