import { parseFlags, printRecord, UsageError } from "../../cli/args";
import type { Deps } from "../../deps";
import { runningCli } from "../../runtime/cli-name";
import { DEVICE_MODELS } from "../devices/schema";
import { ensureDefaultOrganization } from "../projects/service";
import { addFirmware, listReleases, publishRelease } from "./releases";

const USAGE = `usage: parley firmware add --version V --model parley_pin|parley_note --file PATH [--notes TEXT] [--publish] [--json]
       parley firmware publish fw_... [--json]
       parley firmware list [--json]`;

/** `parley firmware ...`: releases of the default organization, also writable with POST /firmware-releases (decision 025). */
export async function firmwareCommand(deps: Deps, args: string[]): Promise<void> {
  const [sub, ...rest] = args;
  const { values, positionals } = parseFlags(rest, {
    version: { type: "string" },
    model: { type: "string" },
    file: { type: "string" },
    notes: { type: "string" },
    publish: { type: "boolean" },
    json: { type: "boolean" },
  });
  const json = values.json === true;
  const org = ensureDefaultOrganization(deps.db, deps.clock.now());
  if (sub === "add") {
    const model = values.model as (typeof DEVICE_MODELS)[number];
    if (!values.version || !values.file || !DEVICE_MODELS.includes(model)) throw new UsageError(USAGE);
    const release = addFirmware(
      deps.db,
      deps.config.dataDir,
      { organizationId: org.id, version: values.version, model, file: values.file, notes: values.notes, publish: values.publish },
      deps.clock.now(),
    );
    printRecord(release, json);
  } else if (sub === "publish") {
    const id = positionals[0];
    if (!id) throw new UsageError(USAGE);
    printRecord(publishRelease(deps.db, org.id, id, deps.clock.now()), json);
  } else if (sub === "list") {
    const page = listReleases(deps.db, org.id, { publishedOnly: false }, { limit: 100 });
    if (json) console.log(JSON.stringify(page.data));
    else if (!page.data.length) console.log(`no firmware release yet: ${runningCli()} firmware add --version V --model M --file PATH adds one`);
    else for (const r of page.data) console.log(`${r.id}  ${r.model}  ${r.version}  ${r.status}  ${r.sha256.slice(0, 12)}`);
  } else {
    throw new UsageError(USAGE);
  }
}
