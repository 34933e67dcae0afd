import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createApp } from "../src/app";
import { registerBackgroundWork, startBackgroundWork } from "../src/background";
import { buildDeps, closeDeps, stopDeps } from "../src/boot";
import { type Clock, ManualClock } from "../src/clock";
import { loadConfig } from "../src/config";
import type { Deps } from "../src/deps";
import type { Resolver } from "../src/dns";
import { createEngines, type Engines } from "../src/engines";
import type { Mode } from "../src/tenancy";
import { createLogger } from "../src/log";
import { createApiKey } from "../src/modules/keys/service";
import { createProject } from "../src/modules/projects/service";
import { openApiContract } from "./support/openapi-contract";
import { releaseAfterFile } from "./support/per-file";
import { offlineDns } from "./support/stand-in-dns";

/** Polls `probe` until it returns something truthy; throws naming `what` after `timeoutMs`. */
export async function waitFor<T>(what: string, probe: () => T | Promise<T>, timeoutMs = 15_000): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(20);
  }
}

export function makeTempDir(prefix = "parley-test-"): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  releaseAfterFile(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/**
 * Real Deps on a fresh SQLite database in a temp dir, with the real migrations; DNS is a
 * stand-in (offline unless `dns` is given). Stopped and closed after the test file.
 */
export async function makeTestDeps(options: { clock?: Clock; env?: Record<string, string>; engines?: Partial<Engines>; dns?: Resolver } = {}): Promise<Deps> {
  const dataDir = makeTempDir();
  const config = loadConfig({ PARLEY_DATA_DIR: dataDir, PARLEY_MODELS_DIR: join(dataDir, "models"), PARLEY_LOG_LEVEL: "silent", ...options.env });
  const log = createLogger("silent");
  const engines = options.engines ? { ...createEngines(config, log), ...options.engines } : undefined;
  const deps = buildDeps(config, { clock: options.clock ?? new ManualClock(), log, engines, dns: options.dns ?? offlineDns });
  // As serve's stop does: background work first (in flight for a moment at most), then the rest.
  releaseAfterFile(async () => {
    await stopDeps(deps, 5_000);
    closeDeps(deps);
  });
  return deps;
}

export type Reply<T = any> = { status: number; body: T; headers: Headers };

export type CallOptions = { key?: string | null; body?: unknown; headers?: Record<string, string>; rawBody?: BodyInit };

/**
 * A test app with a helper to call it through app.handle. Every reply of an operation the
 * OpenAPI document describes is checked against it, so each API test also tests the contract.
 */
export async function makeTestApp(options: Parameters<typeof makeTestDeps>[0] = {}) {
  const deps = await makeTestDeps(options);
  const tasks = registerBackgroundWork(deps);
  startBackgroundWork(deps);
  const app = createApp(deps);
  const contract = openApiContract(deps);
  async function call<T = any>(method: string, path: string, opts: CallOptions = {}): Promise<Reply<T>> {
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.key) headers.authorization = `Bearer ${opts.key}`;
    let body: BodyInit | undefined = opts.rawBody;
    if (opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      headers["content-type"] = "application/json";
    }
    const res = await app.handle(new Request(`http://localhost${path}`, { method, headers, body }));
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {}
    const reply = { status: res.status, body: parsed as T, headers: res.headers };
    const operation = contract.operationFor(method, path);
    const violation = operation && contract.violation(operation, reply);
    if (violation) throw new Error(`The reply breaks the OpenAPI document: ${violation}`);
    return reply;
  }
  /** Runs one periodic task by name, as the scheduler would. */
  const runTask = async (name: string) => {
    const task = tasks.find((x) => x.name === name);
    if (!task) throw new Error(`no periodic task ${name}`);
    await task.run();
  };
  return { deps, app, call, clock: deps.clock as ManualClock, runTask };
}

let projectCounter = 0;

/** A project with a secret key in each mode; more keys via `key()`. */
export function makeTenant(deps: Deps, name = `project-${++projectCounter}`) {
  const project = createProject(deps.db, name, deps.clock.now());
  const key = (mode: Mode = "test", extra: { scopes?: string[]; endUserId?: string } = {}) =>
    createApiKey(deps.db, { project: name, mode, scopes: extra.scopes, endUserId: extra.endUserId }, deps.clock.now()).key;
  return { project, test: key("test"), live: key("live"), key };
}
