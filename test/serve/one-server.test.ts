// One server per port and per data dir (decision 079), with real processes: a second
// `parley serve` refuses to start, and the first one's death (kill -9) frees the data dir.
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { makeTempDir } from "../helpers";
import { freePort, parley, spawnServer, startServer } from "../support/server-process";

const envFor = (dataDir: string, port: number) => ({ PARLEY_DATA_DIR: dataDir, PARLEY_PORT: String(port) });

test("a second serve on a port in use exits 1 saying so; the first keeps serving alone", async () => {
  const port = freePort();
  const first = await startServer(envFor(makeTempDir(), port));
  const second = spawnServer(envFor(makeTempDir(), port));
  expect(await second.proc.exited).toBe(1);
  expect(second.stderr()).toContain(`error: port ${port} on 127.0.0.1 is in use`);
  expect((await fetch(`${first.base}/healthz`)).ok).toBe(true);
  first.proc.kill("SIGTERM");
  expect(await first.proc.exited).toBe(0);
});

test("a second serve on a data dir in use exits 1 naming the first; the CLI works beside it; kill -9 frees the dir", async () => {
  const dataDir = makeTempDir();
  const first = await startServer(envFor(dataDir, freePort()));
  const startedAt = JSON.parse(readFileSync(join(dataDir, "server.json"), "utf8")).started_at;

  const second = spawnServer(envFor(dataDir, freePort()));
  expect(await second.proc.exited).toBe(1);
  expect(second.stderr()).toContain(`error: ${dataDir} is in use by another parley server (pid ${first.proc.pid}, ${first.base}, started at ${startedAt})`);

  // The other commands share the database with a running server, as before.
  expect((await parley(["projects", "create", "beside"], { PARLEY_DATA_DIR: dataDir })).code).toBe(0);

  first.proc.kill(9);
  await first.proc.exited;
  const third = await startServer(envFor(dataDir, freePort()));
  expect(JSON.parse(readFileSync(join(dataDir, "server.json"), "utf8"))).toMatchObject({ pid: third.proc.pid, url: third.base });
  third.proc.kill("SIGINT");
  expect(await third.proc.exited).toBe(0);
});
