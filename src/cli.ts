#!/usr/bin/env bun
import { buildDeps, closeDeps } from "./boot";
import { formatTable, UsageError } from "./cli/args";
import { ConfigError, loadConfig } from "./config";
import type { Config } from "./config";
import type { Deps } from "./deps";
import { ApiError } from "./http/errors";
import { modelsCommand } from "./cli/models";
import { doctorCommand } from "./cli/doctor";
import { backupCommand, restoreCommand } from "./cli/backup";
import { evalCommand } from "./cli/eval-speakers";
import { PARLEY_VERSION } from "./version";
import { auditCommand } from "./modules/audit/cli";
import { adminCommand } from "./modules/admins/cli";
import { exportCommand } from "./modules/exports/cli";
import { configCommand } from "./modules/config/cli";
import { firmwareCommand } from "./modules/firmware/cli";
import { keysCommand } from "./modules/keys/cli";
import { endUsersCommand } from "./modules/portal/cli";
import { orgCommand, projectsCommand } from "./modules/projects/cli";
import { recordingsCommand } from "./modules/transcriptions/cli";
import { simulateCommand } from "./simulator";
import { StartupError } from "./startup-error";

type Command = (deps: Deps, args: string[]) => void | Promise<void>;
type StandaloneCommand = (config: Config, args: string[]) => void | Promise<void>;

/** Commands that work on the database directly (the server may be running: SQLite WAL allows it). */
const COMMANDS: Record<string, Command> = {
  projects: projectsCommand,
  keys: keysCommand,
  org: orgCommand,
  config: configCommand,
  firmware: firmwareCommand,
  audit: auditCommand,
  admin: adminCommand,
  recordings: recordingsCommand,
  "end-users": endUsersCommand,
};

/** Commands that need no database (they talk to a server, or only to files). */
const STANDALONE: Record<string, StandaloneCommand> = {
  models: (config, args) => modelsCommand(config, args),
  doctor: doctorCommand,
  backup: backupCommand,
  restore: restoreCommand,
  eval: evalCommand,
  simulate: simulateCommand,
  export: (_config, args) => exportCommand(args),
  demo: async (config, args) => (await import("./demo")).demoCommand(config, args),
};

/** The commands and what each does: one row each, laid out by the CLI's one table formatter. */
const COMMAND_LIST: [string, string][] = [
  ["parley [serve]", "start the appliance (default)"],
  ["parley projects create NAME", "make a project"],
  ["parley projects list", "the projects"],
  ["parley projects delete NAME --yes", "erase a project, its recordings and its data key"],
  ["parley keys create|list|revoke", "manage API keys (rotate-master: the audio's master key)"],
  ["parley admin ACTION EMAIL", "dashboard administrators: create, list, set-role, reset-password, reset-mfa, remove"],
  ["parley org update --plan P", "standard or enterprise (device events)"],
  ["parley config get|set|unset|clear", "configuration at organization, project, end-user or device level"],
  ["parley models ACTION", "speech and language models: list, pull, import, verify, remove"],
  ["parley end-users invite eu_...", "a wearer's one-time sign-in link to the portal at /me"],
  ["parley recordings reprocess --failed", "transcribe again the recordings whose processing failed"],
  ["parley doctor [--verify]", "models, data dir permissions, ffmpeg, GPU and the engines in use"],
  ["parley backup PATH", "database, audio, firmware and secret key with SHA-256s (while serving)"],
  ["parley restore PATH [--force]", "a backup into PARLEY_DATA_DIR (the server stopped)"],
  ["parley firmware add|publish|list", "organization firmware releases for OTA"],
  ["parley eval speakers DIR", "the installed diarizer scored on audio + RTTM pairs: DER, speaker count"],
  ["parley audit verify", "checks the audit log's hash chain (exit 1 naming the first bad row)"],
  ["parley export verify ARCHIVE", "re-checks an eDiscovery export against its manifest"],
  ["parley simulate --api-key KEY", "simulated wearables (--devices N) against a running server"],
  ["parley demo [--devices N]", "the appliance plus simulated wearables, for an offline demo"],
  ["parley --version", "the version of this parley"],
];

const USAGE = `parley — self-hosted conversation capture

usage:
${formatTable(COMMAND_LIST, "  ")}

Configuration comes from PARLEY_* environment variables (see README).`;

async function main(argv: string[]): Promise<number> {
  const [name = "serve", ...args] = argv;
  try {
    // Before the configuration: the version answers whatever the environment holds.
    if (name === "--version" || name === "-v" || name === "version") {
      console.log(`parley ${PARLEY_VERSION}`);
      return 0;
    }
    // `parley COMMAND --help`: that command's lines of the list, and nothing run (`serve --help` would start a server).
    if (args.includes("--help") || args.includes("-h")) {
      const rows = COMMAND_LIST.filter(([usage]) => usage.replace(/[[\]]/g, "").startsWith(`parley ${name}`));
      if (rows.length) {
        console.log(`${formatTable(rows, "  ")}\n\n\`parley help\` lists every command; the README's CLI section says what each does.`);
        return 0;
      }
    }
    if (name === "serve" && args.length)
      throw new UsageError(
        `serve takes no arguments (got ${args.join(" ")}): it is configured by PARLEY_* environment variables, e.g. PARLEY_PORT=9000 (see README).`,
      );
    const config = loadConfig();
    if (name === "serve") {
      const { serve } = await import("./main");
      await serve(config);
      return -1; // keep running
    }
    if (name === "help" || name === "--help" || name === "-h") {
      console.log(USAGE);
      return 0;
    }
    const standalone = STANDALONE[name];
    if (standalone) {
      await standalone(config, args);
      return 0;
    }
    const command = COMMANDS[name];
    if (!command) throw new UsageError(`unknown command: ${name}\n\n${USAGE}`);
    const deps = buildDeps(config, {});
    try {
      await command(deps, args);
    } finally {
      closeDeps(deps);
    }
    return 0;
  } catch (err) {
    if (err instanceof UsageError) {
      console.error(err.message);
      return 2;
    }
    if (err instanceof ConfigError || err instanceof ApiError || err instanceof StartupError) {
      console.error(`error: ${err.message}`);
      return 1;
    }
    throw err;
  }
}

const code = await main(process.argv.slice(2));
// A command that reported a failure itself sets process.exitCode (models verify, doctor).
if (code >= 0) process.exit(code || Number(process.exitCode ?? 0));
