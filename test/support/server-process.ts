// Real `parley serve` processes on temp data dirs, started and signalled the way an operator's
// supervisor does. Every process started here is killed when the test file ends.
import { join } from "node:path";
import { waitFor } from "../helpers";
import { releaseAfterFile } from "./per-file";

const BUN = process.execPath;
const CLI = join(import.meta.dir, "..", "..", "src", "cli.ts");

/** A port nothing listens on right now. */
export function freePort(): number {
  const probe = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
  const port = probe.port!;
  probe.stop(true);
  return port;
}

/** `parley ARGS`, through sh under `umask` when one is given (as a service manager starts it). */
function commandLine(args: string[], umask?: string): string[] {
  return umask ? ["sh", "-c", `umask ${umask}; exec "$0" "$@"`, BUN, CLI, ...args] : [BUN, CLI, ...args];
}

export type ServerProcess = {
  proc: ReturnType<typeof Bun.spawn>;
  base: string;
  /** Everything it wrote to stderr so far (JSON log lines, or the CLI's error). */
  stderr(): string;
};

/**
 * Spawns `parley serve` with `env` (PARLEY_* only, plus PATH). With `umask` it runs under
 * that umask, through sh, as a service manager would start it.
 */
export function spawnServer(env: Record<string, string>, options: { umask?: string } = {}): ServerProcess {
  const proc = Bun.spawn(commandLine(["serve"], options.umask), { env: { PATH: process.env.PATH ?? "", ...env }, stdout: "ignore", stderr: "pipe" });
  releaseAfterFile(() => proc.kill(9));
  let text = "";
  void (async () => {
    const reader = proc.stderr.getReader();
    const decoder = new TextDecoder();
    for (let r = await reader.read(); !r.done; r = await reader.read()) text += decoder.decode(r.value, { stream: true });
  })();
  return { proc, base: `http://127.0.0.1:${env.PARLEY_PORT}`, stderr: () => text };
}

/** Spawns a server and waits until it answers /healthz (failing at once if it exits instead). */
export async function startServer(env: Record<string, string>, options: { umask?: string } = {}): Promise<ServerProcess> {
  const server = spawnServer(env, options);
  await waitFor(`parley serve on ${server.base}`, async () => {
    if (server.proc.exitCode !== null) throw new Error(`parley serve exited ${server.proc.exitCode}: ${server.stderr()}`);
    return fetch(`${server.base}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
  });
  return server;
}

/** Runs another parley command (projects, keys, doctor ...) to its end. */
export async function parley(args: string[], env: Record<string, string>, options: { umask?: string } = {}) {
  const proc = Bun.spawn(commandLine(args, options.umask), { env: { PATH: process.env.PATH ?? "", ...env }, stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { stdout, stderr, code };
}

/** A project and a secret test key made with the CLI, and a JSON API client for `base` with it. */
export async function apiClient(env: Record<string, string>, base: string) {
  await parley(["projects", "create", "clinic"], env);
  const created = await parley(["keys", "create", "--project", "clinic", "--mode", "test", "--json"], env);
  const key = JSON.parse(created.stdout).key as string;
  return (method: string, path: string, body?: unknown) =>
    fetch(`${base}/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
}
