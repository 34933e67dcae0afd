import type { Deps } from "../../deps";
import { importAdvice } from "../../model-files/manifest";
import { runningCli } from "../../runtime/cli-name";
import { healthReport } from "../health/service";
import { type Check, databaseCheck, withVerdict, worstVerdict } from "../../verdicts";
import { listProjects } from "../projects/service";
import { failedJobs, failedRecordings, type JobLine, jobsInFlight } from "./store";
import { transportReport } from "./transport";

/** How many jobs of each kind the page lists (the counts in health are complete). */
const LISTED_JOBS = 50;

/** Runs parley doctor's checks on this server's engines; supplied by the composition root (modules do not import the CLI). */
export type Diagnose = (deps: Deps, options?: { verify?: boolean }) => Promise<Check[]>;

/** The ids a job's payload names (recording, transcription, summary) and its tenant, without the rest. */
function describeJob(job: JobLine, projectNames: Map<string, string>) {
  let payload: Record<string, unknown> = {};
  try {
    payload = JSON.parse(job.payload);
  } catch {}
  const subject = ["recording_id", "transcription_id", "summary_id"].map((k) => payload[k]).find((v): v is string => typeof v === "string") ?? null;
  const projectId = typeof payload.project_id === "string" ? payload.project_id : null;
  return {
    id: job.id,
    type: job.type,
    state: job.state,
    attempts: job.attempts,
    max_attempts: job.max_attempts,
    subject,
    project: projectId ? (projectNames.get(projectId) ?? projectId) : null,
    mode: typeof payload.mode === "string" ? payload.mode : null,
    error: job.last_error,
    run_at: job.run_at,
    created_at: job.created_at,
    updated_at: job.updated_at,
  };
}

/** Work that failed: jobs that gave up, recordings whose processing failed (a missing model fails them without a dead job). */
function failedWork(deps: Deps, dead: number): Check[] {
  const recordings = failedRecordings(deps.db);
  let latest = "";
  try {
    latest = recordings.latest ? `; the latest: ${(JSON.parse(recordings.latest) as { message?: string }).message ?? recordings.latest}` : "";
  } catch {}
  return [
    dead
      ? { check: "failed jobs", ok: true, warning: true, detail: `${dead} job(s) gave up after their retries (listed under Failed jobs)` }
      : { check: "failed jobs", ok: true, detail: "none" },
    recordings.count
      ? { check: "failed recordings", ok: true, warning: true, detail: `${recordings.count} recording(s) failed processing${latest}` }
      : { check: "failed recordings", ok: true, detail: "none" },
  ];
}

/**
 * The System page's checks, one list with one verdict each (decision 119): parley doctor's,
 * run on this server's engines and settings, then the database and the work that failed.
 * `verdict` is the worst of them: the page's headline.
 */
export async function systemChecks(deps: Deps, diagnose: Diagnose, options: { verify?: boolean } = {}) {
  const health = healthReport(deps);
  const checks = [databaseCheck(health.database.ok), ...(await diagnose(deps, options)), ...(health.queue ? failedWork(deps, health.queue.dead) : [])].map(
    withVerdict,
  );
  return { verdict: worstVerdict(checks.map((c) => c.verdict)), checks };
}

/**
 * The System page's report: GET /v1/health's (database, free disk, models with the command
 * that installs each, queue counts), whether the wire is encrypted, and the jobs in flight
 * and failed, with their reasons.
 * Appliance-wide: an administrator runs the whole box.
 */
export function systemReport(deps: Deps) {
  const projectNames = new Map(listProjects(deps.db).map((p) => [p.id, p.name]));
  return {
    health: healthReport(deps),
    // Said with the CLI as it runs here, as health's install commands are (decision 121).
    import_command: importAdvice(runningCli()),
    transport: transportReport(deps.config, deps.clock.now()),
    jobs: {
      in_flight: jobsInFlight(deps.db, LISTED_JOBS).map((j) => describeJob(j, projectNames)),
      failed: failedJobs(deps.db, LISTED_JOBS).map((j) => describeJob(j, projectNames)),
    },
  };
}
