import type { Deps } from "../../deps";
import { parseFlags, printRecord, UsageError } from "../../cli/args";
import { runningCli } from "../../runtime/cli-name";
import { deleteProject } from "./deletion";
import { changeOrganizationPlan, createProject } from "./service";
import { ensureDefaultOrganization, listProjects } from "./store";

const USAGE = "usage: parley projects create NAME [--json] | parley projects list [--json] | parley projects delete NAME [--yes] [--json]";

/**
 * parley projects delete NAME [--yes] [--json] (decision 107). Without --yes it erases
 * nothing: it says what would go (a dry run, so a legal hold is reported just the same)
 * and exits 1. With it, the deletion commits, then the project's stored objects are
 * removed at once (the job enqueued with it does the same if this process stops first).
 */
async function deleteCommand(deps: Deps, name: string, confirmed: boolean, json: boolean): Promise<void> {
  const deletion = deleteProject(deps, name, deps.clock.now(), { dryRun: !confirmed });
  const { project, recordings } = deletion;
  if (confirmed) await deps.storage.removePrefix(`${project.id}/`);
  const record = {
    id: project.id,
    name: project.name,
    recordings_erased: recordings,
    data_key: confirmed ? "destroyed" : "would be destroyed",
    deleted: confirmed,
  };
  if (confirmed || json) printRecord(record, json);
  if (confirmed) return;
  if (!json) {
    console.log(`Deleting project ${project.name} (${project.id}) would erase ${recordings} recording(s) with their transcripts, summaries and audio,`);
    console.log("its API keys, devices, end users, webhooks, released legal holds, exports and configuration, and destroy its data key:");
    console.log("a copy of its encrypted audio (a backup, an S3 version) could never be read again. The audit log keeps its rows.");
  }
  console.error(`Nothing was deleted. To delete it: ${runningCli()} projects delete ${JSON.stringify(project.name)} --yes`);
  process.exitCode = 1;
}

/** parley projects create NAME | list | delete NAME [--yes], each with [--json] */
export async function projectsCommand(deps: Deps, args: string[]): Promise<void> {
  const { values, positionals } = parseFlags(args, { json: { type: "boolean" }, yes: { type: "boolean" } });
  const [action, name] = positionals;
  if (action === "delete" && name) await deleteCommand(deps, name, Boolean(values.yes), Boolean(values.json));
  else if (action === "create" && name) {
    const p = createProject(deps.db, name, deps.clock.now());
    printRecord({ id: p.id, name: p.name, created_at: p.created_at }, Boolean(values.json));
  } else if (action === "list") {
    const projects = listProjects(deps.db);
    if (values.json) console.log(JSON.stringify(projects));
    else for (const p of projects) console.log(`${p.id}  ${p.name}`);
  } else throw new UsageError(USAGE);
}

/** parley org update --plan standard|enterprise (enterprise enables device events) */
export function orgCommand(deps: Deps, args: string[]): void {
  const { values, positionals } = parseFlags(args, { plan: { type: "string" }, json: { type: "boolean" } });
  if (positionals[0] !== "update" || (values.plan !== "standard" && values.plan !== "enterprise")) {
    throw new UsageError("usage: parley org update --plan standard|enterprise");
  }
  const org = ensureDefaultOrganization(deps.db, deps.clock.now());
  changeOrganizationPlan(deps.db, org.id, values.plan, deps.clock.now());
  printRecord({ id: org.id, name: org.name, plan: values.plan }, Boolean(values.json));
}
