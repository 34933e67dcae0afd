import { existsSync } from "node:fs";
import { join } from "node:path";
import { buildDeps, closeDeps } from "./boot";
import { parseFlags, UsageError } from "./cli/args";
import type { Config } from "./config";
import type { Deps } from "./deps";
import { createLogger, type LogSink, redact } from "./log";
import { serve } from "./main";
import { modelStatus } from "./model-files/install";
import { defaultManifest, importAdvice, installAdvice, type Manifest } from "./model-files/manifest";
import { runningCli } from "./runtime/cli-name";
import { countAdmins } from "./modules/admins/service";
import { type CreatedApiKey, createApiKey } from "./modules/keys/service";
import { createProject, findProjectByName } from "./modules/projects/service";
import { formatStats, startSimulation, streamFlag } from "./simulator";

const USAGE = `usage: parley demo [--devices N] [--duration SECONDS] [--project NAME] [--speed X | --no-stream]
  Starts the appliance with a demo project and N simulated wearables (default 5) that bind,
  heartbeat and stream their recordings in real time (the dashboard shows the transcript
  growing; --speed 4 streams four times as fast, --no-stream uploads each recording whole
  when it stops), and prints a key for the dashboard. Runs until Ctrl-C.`;

/** A model the demo needs that is not installed, and what it would show. */
export type MissingDemoModel = { model: string; shows: string };

/** The configured models that are not installed; a name outside the manifest counts as installed when its file exists. */
export function missingDemoModels(config: Config, manifest: Manifest = defaultManifest): MissingDemoModel[] {
  const wanted = [
    { model: config.models.whisper, shows: "transcripts" },
    { model: config.models.llm, shows: "summaries and Ask" },
    { model: config.models.embedding, shows: "semantic search" },
  ];
  return wanted.filter(({ model }) => {
    const entry = manifest.models.find((m) => m.name === model);
    if (!entry) return !existsSync(model) && !existsSync(join(config.modelsDir, model));
    const status = modelStatus({ modelsDir: config.modelsDir }, entry);
    return status === "missing" || status === "partial";
  });
}

/** What the demo says first when models are missing: which, what they show, and the commands that install them. */
export function formatMissingModels(missing: MissingDemoModel[]): string {
  const advice = missing.map((m) => installAdvice(m.model, { cli: runningCli() }));
  const width = Math.max(...advice.map((a) => a.length));
  return [
    "Models not installed. Everything else runs (devices, uploads, the dashboard); each line says what",
    "the model adds. Install with:",
    ...missing.map((m, i) => `  ${advice[i]!.padEnd(width)}   # ${m.shows}`),
    `  (on an air-gapped machine: ${importAdvice(runningCli())}, from a folder copied from one that pulled them)`,
    // Without a transcriber every upload fails; installing it later does not undo that by itself.
    ...(missing.some((m) => m.shows === "transcripts")
      ? [
          `Recordings made meanwhile fail to transcribe; once it is installed: ${runningCli()} recordings reprocess --failed`,
          "(or Reprocess all failed on the dashboard's Recordings page).",
        ]
      : []),
  ].join("\n");
}

/**
 * The demo's console: the server's log as plain lines among the demo's own (one style, on
 * stdout), secrets masked as in the JSON log. A warning or error is shown once: a missing
 * model fails every upload with the same words, and the notice above already said it.
 */
export function demoConsole(write: (line: string) => void = console.log): LogSink {
  const seen = new Set<string>();
  return (level, msg, fields) => {
    const { error, ...rest } = fields;
    const text = error === undefined ? msg : `${msg}: ${String(error)}`;
    if (level === "warn" || level === "error") {
      if (seen.has(`${level} ${text}`)) return;
      seen.add(`${level} ${text}`);
    }
    const details = Object.entries(rest).map(([k, v]) => `${k} ${typeof v === "string" ? v : JSON.stringify(v)}`);
    const prefix = level === "info" ? "" : `${level === "warn" ? "warning" : level}: `;
    const again = level === "warn" || level === "error" ? " (repeats are not shown)" : "";
    write(redact(`${prefix}${text}${details.length ? ` (${details.join(", ")})` : ""}${again}`));
  };
}

/** The demo's simulated wearers keep one run name, so a second demo uses the first's end users and devices again. */
const DEMO_RUN = "demo";

/**
 * `parley demo`: the offline sales demo in one command. Installed models make the
 * uploads (spoken sample conversations) flow on into transcripts, summaries, search and
 * Ask; without them it says first which to install and how (the dashboard says the same,
 * from GET /v1/health), and everything else runs.
 */
export async function demoCommand(config: Config, args: string[]): Promise<void> {
  const { values } = parseFlags(args, {
    devices: { type: "string" },
    duration: { type: "string" },
    project: { type: "string" },
    speed: { type: "string" },
    "no-stream": { type: "boolean" },
  });
  const devices = Number(values.devices ?? 5);
  const duration = Number(values.duration ?? 0);
  const projectName = values.project ?? "demo";
  if (!Number.isInteger(devices) || devices < 1 || devices > 500 || !(duration >= 0)) throw new UsageError(USAGE);
  const stream = streamFlag(values, USAGE);

  // First thing, before the server's own log lines: what the demo cannot show yet and how to fix it.
  const missing = missingDemoModels(config);
  if (missing.length) console.log(`${formatMissingModels(missing)}\n`);

  // The server first: it takes the data dir's lock (and the port), so a demo refused for
  // either has created nothing, no project and no key that nobody is shown.
  const log = createLogger(config.logLevel, demoConsole());
  const server = await serve(config, { log });
  let key: CreatedApiKey;
  let hasAdmin: boolean;
  let setup: Deps | undefined;
  try {
    setup = buildDeps(config, { log });
    if (!findProjectByName(setup.db, projectName)) createProject(setup.db, projectName, setup.clock.now());
    key = createApiKey(setup.db, { project: projectName, mode: "test", name: "parley demo" }, setup.clock.now());
    hasAdmin = countAdmins(setup.db) > 0;
  } catch (err) {
    await server.stop();
    throw err;
  } finally {
    if (setup) closeDeps(setup);
  }
  console.log(`Parley demo running at ${server.url}`);
  console.log(`  dashboard: ${server.url}/dashboard${hasAdmin ? "" : " (the first visit from this machine creates its administrator)"}`);
  console.log(`  API key (project ${projectName}, test mode, shown once): ${key.key}`);
  const sim = await startSimulation({
    url: server.url,
    apiKey: key.key,
    devices,
    durationSeconds: duration,
    intervalSeconds: 5,
    uploads: true,
    stream,
    // Where the audience watches the transcript grow.
    onStream: (id, sample, seconds) => console.log(`streaming ${sample.name} (${Math.round(seconds)} s) as ${id}: ${server.url}/dashboard#/recordings/${id}`),
    recordAtOnce: true,
    run: DEMO_RUN,
    log: console.log,
  });
  process.once("SIGINT", () => sim.stop());
  const progress = setInterval(() => console.log(formatStats(sim.stats)), 15_000);
  const stats = await sim.done;
  clearInterval(progress);
  console.log(`demo finished: ${formatStats(stats)}`);
  await server.stop();
}
