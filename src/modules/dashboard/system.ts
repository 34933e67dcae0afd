import type { Deps } from "../../deps";
import { healthReport } from "../health/service";
import { listProjects } from "../projects/service";
import { failedJobs, type JobLine, jobsInFlight } from "./store";
import { transportReport } from "./transport";

/** How many jobs of each kind the page lists (the counts in health are complete). */
const LISTED_JOBS = 50;

/** A parley doctor check, as src/cli/doctor.ts reports it. */
export type Check = { check: string; ok: boolean; detail: string };
/** Runs parley doctor's checks on this server's engines; supplied by the composition root (modules do not import the CLI). */
export type Diagnose = (deps: Deps) => Promise<Check[]>;

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
    transport: transportReport(deps.config, deps.clock.now()),
    jobs: {
      in_flight: jobsInFlight(deps.db, LISTED_JOBS).map((j) => describeJob(j, projectNames)),
      failed: failedJobs(deps.db, LISTED_JOBS).map((j) => describeJob(j, projectNames)),
    },
  };
}
