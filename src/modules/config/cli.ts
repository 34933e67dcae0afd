import type { Deps } from "../../deps";
import { parseFlags, UsageError } from "../../cli/args";
import type { Tenant } from "../../tenancy";
import { ensureDefaultOrganization, findProjectByName } from "../projects/service";
import { type ConfigOverrides, configBody } from "./schema";
import { type ConfigTarget, readConfigLevel, readOrganizationConfig, toOverrides, writeConfigLevel, writeOrganizationConfig } from "./service";

const USAGE = `usage: parley config get   --level organization|project|end-user|device [--project NAME --mode test|live] [--end-user ID | --device ID]
       parley config set   (same flags) KEY=VALUE ...   e.g. auto_summarize=false settings.upload.streaming_chunk_kb=512
       parley config unset (same flags) KEY ...
       parley config clear (same flags)
VALUE is read as JSON when it parses (true, 512, null, ["wifi","ble"]) and as a string otherwise.
The organization level needs no --project; the others do.`;

type Scope = { organization: true; organizationId: string } | { organization: false; tenant: Tenant; target: ConfigTarget };

function scopeOf(deps: Deps, values: Record<string, string | boolean | undefined>): Scope {
  const level = values.level ?? (values.device ? "device" : values["end-user"] ? "end-user" : undefined);
  if (level === "organization") return { organization: true, organizationId: ensureDefaultOrganization(deps.db, deps.clock.now()).id };
  if (level !== "project" && level !== "end-user" && level !== "device") throw new UsageError(USAGE);
  const project = typeof values.project === "string" ? findProjectByName(deps.db, values.project) : null;
  if (!project) throw new UsageError(values.project ? `no project named ${values.project}` : USAGE);
  if (values.mode !== "test" && values.mode !== "live") throw new UsageError("--mode must be test or live");
  const id = level === "device" ? values.device : level === "end-user" ? values["end-user"] : project.id;
  if (typeof id !== "string") throw new UsageError(`--level ${level} needs --${level === "device" ? "device" : "end-user"} ID`);
  return { organization: false, tenant: { projectId: project.id, mode: values.mode }, target: { level: level === "end-user" ? "end_user" : level, id } };
}

function setPath(target: Record<string, unknown>, path: string[], value: unknown): void {
  const [head, ...rest] = path;
  if (!head) throw new UsageError("empty KEY");
  if (rest.length === 0) {
    if (value === undefined) delete target[head];
    else target[head] = value;
    return;
  }
  const child = target[head];
  const next = typeof child === "object" && child !== null && !Array.isArray(child) ? (child as Record<string, unknown>) : {};
  target[head] = next;
  setPath(next, rest, value);
}

function parseValue(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}

/** Applies KEY=VALUE (or KEY to unset) assignments to a level's overrides and validates the result as the API would. */
export function applyAssignments(current: ConfigOverrides, assignments: string[], unset: boolean): ConfigOverrides {
  const next = structuredClone(current) as Record<string, unknown>;
  for (const a of assignments) {
    const eq = a.indexOf("=");
    if (unset) setPath(next, a.split("."), undefined);
    else if (eq <= 0) throw new UsageError(`expected KEY=VALUE, got ${a}`);
    else setPath(next, a.slice(0, eq).split("."), parseValue(a.slice(eq + 1)));
  }
  const parsed = configBody.safeParse(next);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new UsageError(`invalid configuration: ${issue?.path.join(".")}: ${issue?.message}`);
  }
  return toOverrides(parsed.data);
}

/** parley config get|set|unset|clear: the only writer of the organization level. */
export function configCommand(deps: Deps, args: string[]): void {
  const { values, positionals } = parseFlags(args, {
    level: { type: "string" },
    project: { type: "string" },
    mode: { type: "string" },
    "end-user": { type: "string" },
    device: { type: "string" },
  });
  const [action, ...assignments] = positionals;
  if (!action || !["get", "set", "unset", "clear"].includes(action)) throw new UsageError(USAGE);
  const scope = scopeOf(deps, values);
  const now = deps.clock.now();
  const read = () => (scope.organization ? readOrganizationConfig(deps.db, scope.organizationId) : readConfigLevel(deps, scope.tenant, scope.target));
  const write = (overrides: ConfigOverrides | null) =>
    scope.organization
      ? writeOrganizationConfig(deps.db, scope.organizationId, overrides, now)
      : writeConfigLevel(deps, scope.tenant, scope.target, overrides, now);
  let result = read();
  if (action === "set" || action === "unset") {
    if (assignments.length === 0) throw new UsageError(USAGE);
    result = write(applyAssignments(toOverrides(result.overrides), assignments, action === "unset"));
  } else if (action === "clear") {
    result = write(null);
  }
  console.log(JSON.stringify(result, null, 2));
}
