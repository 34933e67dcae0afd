import type { Deps } from "../../deps";
import { ApiError } from "../../http/errors";
import { findProjectByName } from "../projects/service";
import { reprocessFailedRecordings } from "./reprocess";
import type { Mode } from "../../tenancy";
import { formatTable, parseFlags, UsageError } from "../../cli/args";

const USAGE = `usage: parley recordings reprocess --failed [--project NAME] [--mode test|live] [--json]
  Transcribes again every recording whose processing failed (a model was missing, say) and
  whose audio is still stored, in every project and mode unless narrowed. The jobs go on the
  queue a running server works from (or the next parley serve); earlier transcriptions stay.`;

/** `parley recordings reprocess --failed`: the CLI's "reprocess all failed" (the dashboard's is on the Recordings page). */
export function recordingsCommand(deps: Deps, args: string[]): void {
  const { values, positionals } = parseFlags(args, {
    failed: { type: "boolean" },
    project: { type: "string" },
    mode: { type: "string" },
    json: { type: "boolean" },
  });
  if (positionals[0] !== "reprocess" || positionals.length > 1 || !values.failed) throw new UsageError(USAGE);
  if (values.mode !== undefined && values.mode !== "test" && values.mode !== "live") throw new UsageError(USAGE);
  if (values.mode && !values.project) throw new UsageError(`--mode narrows a project: give --project too.\n${USAGE}`);
  const modes: Mode[] = values.mode ? [values.mode as Mode] : ["test", "live"];
  let tenants: { projectId: string; mode: Mode }[] | [null] = [null];
  if (values.project) {
    const project = findProjectByName(deps.db, values.project);
    if (!project) throw new ApiError("not_found", `No project named ${values.project}.`);
    tenants = modes.map((mode) => ({ projectId: project.id, mode }));
  }
  const started = tenants.flatMap((tenant) => reprocessFailedRecordings(deps, tenant));
  if (values.json) return console.log(JSON.stringify(started));
  if (!started.length) return console.log("No failed recording with its audio still stored: nothing to reprocess.");
  console.log(formatTable(started.map((r) => [r.recording_id, r.transcription_id, `${r.project_id} (${r.mode})`])));
  console.log(`Queued ${started.length} recording(s) for transcription again; a running server starts at once, otherwise the next parley serve does.`);
}
