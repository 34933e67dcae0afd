import { parseFlags, printRecord, UsageError } from "../../cli/args";
import type { Deps } from "../../deps";
import { ApiError } from "../../http/errors";
import { operatorActor } from "../audit/service";
import { issueInvite } from "./invites";
import { findEndUserTenant } from "./store";

const USAGE = `usage: parley end-users invite eu_... [--json]   a one-time sign-in link to the wearer's portal (/me), on PARLEY_PUBLIC_URL`;

/** `parley end-users invite`: the operator hands a wearer their way in (decision 147). */
export function endUsersCommand(deps: Deps, args: string[]): void {
  const { values, positionals } = parseFlags(args, { json: { type: "boolean" } });
  const [action, endUserId] = positionals;
  if (action !== "invite" || !endUserId) throw new UsageError(USAGE);
  // An end user id names its project and mode: the operator need not say them again.
  const tenant = findEndUserTenant(deps.db, endUserId);
  if (!tenant) throw new ApiError("not_found", `No end user ${endUserId}.`);
  const invite = issueInvite(deps, { projectId: tenant.project_id, mode: tenant.mode }, endUserId, operatorActor(), deps.config.publicUrl);
  printRecord(invite, Boolean(values.json));
  if (!values.json) console.error(`The link works once, until ${invite.expires_at}. Send it to the wearer; it is not shown again.`);
}
