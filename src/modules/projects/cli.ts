import type { Deps } from "../../deps";
import { parseFlags, printRecord, UsageError } from "../../cli/args";
import { changeOrganizationPlan, createProject } from "./service";
import { ensureDefaultOrganization, listProjects } from "./store";

/** parley projects create NAME [--json] | parley projects list [--json] */
export function projectsCommand(deps: Deps, args: string[]): void {
  const { values, positionals } = parseFlags(args, { json: { type: "boolean" } });
  const [action, name] = positionals;
  if (action === "create" && name) {
    const p = createProject(deps.db, name, deps.clock.now());
    printRecord({ id: p.id, name: p.name, created_at: p.created_at }, Boolean(values.json));
  } else if (action === "list") {
    const projects = listProjects(deps.db);
    if (values.json) console.log(JSON.stringify(projects));
    else for (const p of projects) console.log(`${p.id}  ${p.name}`);
  } else throw new UsageError("usage: parley projects create NAME [--json] | parley projects list [--json]");
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
