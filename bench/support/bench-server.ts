import { join } from "node:path";
import { buildDeps } from "../../src/boot";
import { loadConfig } from "../../src/config";
import { createApiKey } from "../../src/modules/keys/service";
import { createProject } from "../../src/modules/projects/service";
import { freePort, startServer } from "./load";

/**
 * A real `parley serve` in a child process on a fresh data dir under `work`, with a test API
 * key of its one project and rate limits off; `env` adds to the configuration. `command` is
 * what runs it: `parley serve` unless a bench needs the server another way.
 */
export async function startBenchServer(work: string, env: Record<string, string>, command = [join(import.meta.dir, "..", "..", "src", "cli.ts"), "serve"]) {
  const config = { PARLEY_DATA_DIR: join(work, "data"), PARLEY_LOG_LEVEL: "silent", ...env };
  const seed = buildDeps(loadConfig(config));
  createProject(seed.db, "bench", seed.clock.now());
  const key = createApiKey(seed.db, { project: "bench", mode: "test" }, seed.clock.now()).key;
  seed.db.close();
  const port = freePort();
  const server = await startServer(
    command,
    { ...config, PARLEY_PORT: String(port), PARLEY_RATE_LIMIT_PER_SECOND: "0", PARLEY_RATE_LIMIT_PER_MINUTE: "0" },
    `http://127.0.0.1:${port}/healthz`,
  );
  return { port, key, server };
}

/** JSON calls to a bench server's /v1 with its key; an answer of 300 or more throws with its body. */
export function benchApi(port: number, key: string) {
  const base = `http://127.0.0.1:${port}/v1`;
  const headers = { authorization: `Bearer ${key}`, "content-type": "application/json" };
  return async (method: string, path: string, body?: unknown) => {
    const r = await fetch(`${base}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${await r.text()}`);
    return r.json() as Promise<Record<string, any>>;
  };
}
