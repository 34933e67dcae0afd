import { formatTable, parseFlags, UsageError } from "../../cli/args";
import type { Deps } from "../../deps";
import { isRole, ROLES, type Role } from "../../http/roles";
import { runningCli } from "../../runtime/cli-name";
import { operatorActor } from "../audit/service";
import { resetSecondFactor } from "./mfa";
import { changeAdminRole, createAdmin, listAdmins, MIN_PASSWORD_LENGTH, openSetupToken, removeAdmin, resetAdminPassword } from "./service";

const USAGE = `usage: parley admin create EMAIL [--role ROLE]  a dashboard administrator (password asked, or PARLEY_ADMIN_PASSWORD / stdin when not a terminal)
       parley admin set-role EMAIL ROLE         in effect from their next request; never the last owner's
       parley admin list [--json]
       parley admin reset-password EMAIL        a new password; the administrator's sessions end
       parley admin remove EMAIL
       parley admin reset-mfa EMAIL             removes a lost second factor (audited); the next sign-in needs the password only
roles: ${ROLES.join(", ")} (create's default: owner, decision 136)`;

/** A role named on the command line, or the usage's complaint. */
function roleArg(value: string | undefined): Role {
  if (value === undefined || !isRole(value))
    throw new UsageError(`The role is one of ${ROLES.join(", ")}${value === undefined ? "" : `, not ${value}`}.\n${USAGE}`);
  return value;
}

const NO_PASSWORD = `No password given. Run the command at a terminal to be asked for it, or give it (at least ${MIN_PASSWORD_LENGTH} characters)
in PARLEY_ADMIN_PASSWORD or as the first line of stdin, e.g. parley admin reset-password EMAIL < password.txt`;

/** Reads a line from the terminal without echoing it. */
function askHidden(question: string): Promise<string> {
  const stdin = process.stdin;
  process.stderr.write(question);
  return new Promise((resolve, reject) => {
    let typed = "";
    const done = (result: () => void) => {
      stdin.off("data", onData);
      stdin.setRawMode(false);
      stdin.pause();
      process.stderr.write("\n");
      result();
    };
    const onData = (chunk: Buffer) => {
      for (const ch of chunk.toString("utf8")) {
        if (ch === "\r" || ch === "\n") return done(() => resolve(typed));
        if (ch === "\u0003") return done(() => reject(new UsageError("cancelled")));
        if (ch === "\u007f" || ch === "\b") typed = typed.slice(0, -1);
        else typed += ch;
      }
    };
    stdin.setRawMode(true);
    stdin.resume();
    stdin.on("data", onData);
  });
}

/**
 * The new password: asked twice on a terminal; otherwise PARLEY_ADMIN_PASSWORD when set
 * (for scripts: it never appears in the process list, as an argument would), else the first
 * line of stdin. Read here, not in Config: it is this command's input, not the server's setting.
 */
async function newPassword(): Promise<string> {
  if (!process.stdin.isTTY) {
    const fromEnv = process.env.PARLEY_ADMIN_PASSWORD;
    if (fromEnv) return fromEnv;
    const line = (await Bun.stdin.text()).split(/\r?\n/)[0] ?? "";
    // Nothing at all is a missing input, not a short password: say how to give one.
    if (!line) throw new UsageError(NO_PASSWORD);
    return line;
  }
  const first = await askHidden(`Password (at least ${MIN_PASSWORD_LENGTH} characters): `);
  if ((await askHidden("Again: ")) !== first) throw new UsageError("The two passwords differ; nothing was changed.");
  return first;
}

/** Dashboard administrators (decision 094). Works on the database directly, with or without a running server. */
export async function adminCommand(deps: Deps, args: string[]): Promise<void> {
  const { values, positionals } = parseFlags(args, { json: { type: "boolean" }, role: { type: "string" } });
  const [action, email, role] = positionals;
  const now = () => deps.clock.now();
  switch (action) {
    case "create": {
      if (!email) throw new UsageError(USAGE);
      // The role is checked before the password is asked for, so a typo costs no typing.
      const chosen = roleArg(values.role ?? "owner");
      const admin = await createAdmin(deps.db, email, await newPassword(), chosen, now());
      console.log(`created administrator ${admin.email} (${admin.id}, ${admin.role}); sign in at ${deps.config.publicUrl}/dashboard`);
      return;
    }
    case "set-role": {
      if (!email) throw new UsageError(USAGE);
      const admin = changeAdminRole(deps.db, { email }, roleArg(role), now());
      console.log(`${admin.email} is now ${admin.role}, from their next request`);
      return;
    }
    case "list": {
      const admins = listAdmins(deps.db);
      if (values.json) console.log(JSON.stringify(admins));
      else if (!admins.length) console.log(`no administrators yet: ${runningCli()} admin create EMAIL`);
      else console.log(formatTable(admins.map((a) => [a.email, a.role, a.id, `created ${a.created_at}`])));
      return;
    }
    case "reset-password": {
      if (!email) throw new UsageError(USAGE);
      const admin = await resetAdminPassword(deps.db, email, await newPassword(), now());
      console.log(`password reset for ${admin.email}; their dashboard sessions ended`);
      return;
    }
    case "reset-mfa": {
      if (!email) throw new UsageError(USAGE);
      const reset = resetSecondFactor(deps.db, email, operatorActor(), now());
      console.log(
        reset.hadOne ? `second factor removed for ${reset.email}; they can set up a new one after signing in` : `${reset.email} had no second factor`,
      );
      return;
    }
    case "remove": {
      if (!email) throw new UsageError(USAGE);
      const admin = removeAdmin(deps.db, { email }, now());
      console.log(`removed administrator ${admin.email}; their sessions ended`);
      // The last one gone: setup is open again, with a new token (the old one was spent, decision 115).
      const token = openSetupToken(deps.db, now());
      if (token)
        console.log(
          `no administrator left: setup is open again at ${deps.config.publicUrl}/dashboard; away from the box it needs this one-time setup token: ${token} (or run ${runningCli()} admin create EMAIL)`,
        );
      return;
    }
    default:
      throw new UsageError(USAGE);
  }
}
