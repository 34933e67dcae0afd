import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Config } from "../config";
import { DOCTOR_HEADER, doctorToken } from "../doctor-token";
import type { Check } from "../verdicts";

/** Who holds the data dir, as its lock file says (src/data-dir/lock.ts). */
type Holder = { pid: number; url: string | null; started_at: string };

/** What doctor reports on: the running server's checks, or its own with the reason it did not ask. */
export type Subject = { checks: Check[] } | { checks: null; why: string | null };

const ASK_TIMEOUT_MS = 10 * 60_000; // its first run loads every model; --verify hashes them all

function runningHolder(dataDir: string): Holder | null {
  let holder: Holder;
  try {
    holder = JSON.parse(readFileSync(join(dataDir, "server.json"), "utf8")) as Holder;
  } catch {
    return null; // no server, or one between taking its lock and writing the file
  }
  try {
    process.kill(holder.pid, 0);
    return holder;
  } catch {
    return null; // killed -9: the kernel dropped its lock, the file stayed
  }
}

/** The server's secret as it reads it: PARLEY_SECRET, else secret.key in the data dir (never made here). */
function serverSecret(config: Pick<Config, "dataDir" | "secret">): string | null {
  if (config.secret) return config.secret;
  const path = join(config.dataDir, "secret.key");
  return existsSync(path) ? readFileSync(path, "utf8").trim() : null;
}

/**
 * Asks the server running on `config.dataDir` for its checks (decision 119): it judges its own
 * settings, engines and models, which may differ from this shell's environment. Null checks
 * when no server runs there, or it could not be asked (then `why` says why, and doctor checks
 * its own environment instead).
 */
export async function askRunningServer(config: Config, options: { verify?: boolean }): Promise<{ holder: Holder | null } & Subject> {
  const holder = runningHolder(config.dataDir);
  if (!holder) return { holder, checks: null, why: null };
  if (!holder.url) return { holder, checks: null, why: "it is starting and not listening yet" };
  const secret = serverSecret(config);
  if (!secret) return { holder, checks: null, why: "its secret is not readable here (run doctor as the server's user, with its PARLEY_SECRET if it has one)" };
  try {
    // The address comes from the data dir's own lock file; its certificate may be the self-signed one this server made.
    const res = await fetch(`${holder.url}/dashboard/api/system/doctor${options.verify ? "?verify=1" : ""}`, {
      headers: { [DOCTOR_HEADER]: doctorToken(secret) },
      tls: { rejectUnauthorized: false },
      signal: AbortSignal.timeout(ASK_TIMEOUT_MS),
    });
    if (res.status === 401) return { holder, checks: null, why: "it refused doctor's token (it runs with another PARLEY_SECRET)" };
    if (!res.ok) return { holder, checks: null, why: `it answered ${res.status}` };
    const body = (await res.json()) as { checks: (Check & { verdict?: string })[] };
    return { holder, checks: body.checks.map(({ verdict: _, ...c }) => c) };
  } catch (err) {
    return { holder, checks: null, why: `it cannot be reached (${(err as Error).message})` };
  }
}

/** The first line of the report: which process the checks are about. */
export function reportsOn(config: Config, asked: Awaited<ReturnType<typeof askRunningServer>>): Check {
  const check = "reports on";
  const { holder } = asked;
  if (!holder) return { check, ok: true, detail: `this shell's settings and environment: no server runs on ${config.dataDir}` };
  const server = `the server running on ${config.dataDir} (pid ${holder.pid}, ${holder.url ?? "not listening yet"}, started at ${holder.started_at})`;
  if (asked.checks) return { check, ok: true, detail: `${server}: its own settings, engines and models, as it reported them` };
  return { check, ok: true, warning: true, detail: `this shell's settings and environment, not those of ${server}: ${asked.why}` };
}
