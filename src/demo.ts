import { buildDeps, closeDeps } from "./boot";
import { parseFlags, UsageError } from "./cli/args";
import type { Config } from "./config";
import { serve } from "./main";
import { createApiKey } from "./modules/keys/service";
import { createProject, findProjectByName } from "./modules/projects/service";
import { formatStats, startSimulation } from "./simulator";

const USAGE = `usage: parley demo [--devices N] [--duration SECONDS] [--project NAME]
  Starts the appliance with a demo project and N simulated wearables (default 5) that bind,
  heartbeat and upload recordings, and prints a key for the dashboard. Runs until Ctrl-C.`;

/**
 * `parley demo`: the offline sales demo in one command. Installed models make the
 * uploads flow on into transcripts, summaries, search and Ask; without them the
 * dashboard shows the devices and recordings and each transcription says which model
 * to install.
 */
export async function demoCommand(config: Config, args: string[]): Promise<void> {
  const { values } = parseFlags(args, { devices: { type: "string" }, duration: { type: "string" }, project: { type: "string" } });
  const devices = Number(values.devices ?? 5);
  const duration = Number(values.duration ?? 0);
  const projectName = values.project ?? "demo";
  if (!Number.isInteger(devices) || devices < 1 || devices > 500 || !(duration >= 0)) throw new UsageError(USAGE);

  const setup = buildDeps(config);
  if (!findProjectByName(setup.db, projectName)) createProject(setup.db, projectName, setup.clock.now());
  const key = createApiKey(setup.db, { project: projectName, mode: "test", name: "parley demo" }, setup.clock.now());
  closeDeps(setup);

  const server = await serve(config);
  console.log(`Parley demo running at ${server.url}`);
  console.log(`  dashboard: ${server.url}/dashboard`);
  console.log(`  API key (project ${projectName}, test mode, shown once): ${key.key}`);
  const sim = await startSimulation({ url: server.url, apiKey: key.key, devices, durationSeconds: duration, intervalSeconds: 5, uploads: true, log: console.log });
  process.once("SIGINT", () => sim.stop());
  const progress = setInterval(() => console.log(formatStats(sim.stats)), 15_000);
  const stats = await sim.done;
  clearInterval(progress);
  console.log(`demo finished: ${formatStats(stats)}`);
  await server.stop();
}
