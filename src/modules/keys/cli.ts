import type { Deps } from "../../deps";
import { formatTable, parseFlags, printRecord, UsageError } from "../../cli/args";
import { lockDataDir } from "../../data-dir/lock";
import { rotateMasterKey } from "../../storage/encryption/rotate-master";
import { createApiKey, listApiKeys, revokeApiKey } from "./service";

const USAGE = `usage: parley keys create --project NAME --mode test|live [--scopes a,b] [--end-user eu_...] [--name TEXT] [--json]
       parley keys list --project NAME [--json]
       parley keys revoke KEY_ID|KEY|HINT   by id, by the full key (a leaked one) or by its hint
       parley keys rotate-master --new-key-file PATH   re-wrap the audio data keys (server stopped)`;

/** A key's scopes as people read them, the same in `create` and `list`. */
const scopesText = (scopes: string[] | null) => scopes?.join(",") ?? "all scopes";

/** API keys are managed here, not through the API (spec 5 rule 2). */
export function keysCommand(deps: Deps, args: string[]): void {
  const { values, positionals } = parseFlags(args, {
    project: { type: "string" },
    mode: { type: "string" },
    scopes: { type: "string" },
    "end-user": { type: "string" },
    name: { type: "string" },
    json: { type: "boolean" },
    "new-key-file": { type: "string" },
  });
  const json = Boolean(values.json);
  switch (positionals[0]) {
    case "create": {
      if (!values.project || (values.mode !== "test" && values.mode !== "live")) throw new UsageError(USAGE);
      const scopes = values.scopes
        ?.split(",")
        .map((s) => s.trim())
        .filter(Boolean);
      // An empty --scopes must not fall through to a full-access secret key.
      if (scopes?.length === 0) throw new UsageError(`--scopes needs at least one scope.\n${USAGE}`);
      const key = createApiKey(
        deps.db,
        { project: values.project, mode: values.mode, scopes, endUserId: values["end-user"], name: values.name },
        deps.clock.now(),
      );
      // JSON keeps null (the API's "no restriction"); people read what `keys list` says.
      printRecord(
        { id: key.id, key: key.key, hint: key.hint, mode: key.mode, scopes: json ? key.scopes : scopesText(key.scopes), end_user_id: key.end_user_id },
        json,
      );
      if (!json) console.error("This is the only time the full key is shown. Store it now.");
      return;
    }
    case "list": {
      if (!values.project) throw new UsageError(USAGE);
      const keys = listApiKeys(deps.db, values.project);
      if (json) console.log(JSON.stringify(keys));
      else if (keys.length)
        console.log(
          formatTable(
            keys.map((k) => [k.id, k.hint, k.mode, scopesText(k.scopes), k.end_user_id ? `end user ${k.end_user_id}` : "", k.revoked_at ? "REVOKED" : ""]),
          ),
        );
      return;
    }
    case "revoke": {
      if (!positionals[1]) throw new UsageError(USAGE);
      // Names the key by id and hint: the argument may be the full secret, never echoed.
      const key = revokeApiKey(deps, positionals[1], deps.clock.now());
      console.log(`revoked ${key.id} (${key.hint})`);
      return;
    }
    case "rotate-master": {
      if (!values["new-key-file"]) throw new UsageError(USAGE);
      // The server must be stopped: it holds the old master key in memory. Its lock says whether it runs.
      const lock = lockDataDir(deps.config.dataDir, deps.clock.now());
      let r: ReturnType<typeof rotateMasterKey>;
      try {
        r = rotateMasterKey(deps.db, deps.config, deps.serverSecret, values["new-key-file"]);
      } finally {
        lock.release();
      }
      console.log(`re-wrapped ${r.rewrapped} project data key(s) from master key ${r.from.id} to ${r.to.id}; no audio was rewritten.`);
      console.log(
        `Start the server with PARLEY_MASTER_KEY_FILE=${values["new-key-file"]}, and keep that file safe and apart from backups: without it no audio can be read.`,
      );
      return;
    }
    default:
      throw new UsageError(USAGE);
  }
}
