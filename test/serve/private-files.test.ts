// Private files (decision 079): a server started under umask 022 on a data dir made 0755
// still keeps every file and folder it writes to its own user; doctor finds what came before.
import { expect, test } from "bun:test";
import { chmodSync, lstatSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { makeTempDir, waitFor } from "../helpers";
import { fixture, sha256 } from "../modules/recordings-support";
import { apiClient, freePort, parley, startServer } from "../support/server-process";

/** Paths under `dir` (and `dir` itself) whose mode gives the group or others anything. */
const widerThanPrivate = (dir: string) =>
  [".", ...readdirSync(dir, { recursive: true, encoding: "utf8" })].filter((p) => (lstatSync(join(dir, p)).mode & 0o077) !== 0);

test("under umask 022, everything a server and the CLI write in the data dir is private", async () => {
  const dataDir = join(makeTempDir(), "data");
  mkdirSync(dataDir, { mode: 0o755 });
  chmodSync(dataDir, 0o755);
  const env = { PARLEY_DATA_DIR: dataDir, PARLEY_PORT: String(freePort()) };
  const server = await startServer(env, { umask: "022" });
  const api = await apiClient(env, server.base);

  const bytes = fixture("tone-3s.wav");
  const rec = await (await api("POST", "/recordings", {})).json();
  const url = (await (await api("POST", `/recordings/${rec.id}/upload-url`, {})).json()).upload_url;
  expect((await fetch(url, { method: "PUT", body: bytes })).status).toBe(200);
  const completion = { sha256: sha256(bytes), file_size_bytes: bytes.length };
  await waitFor("the upload verified", async () => (await api("POST", `/recordings/${rec.id}/upload-complete`, completion)).status === 200);
  expect((await parley(["keys", "create", "--project", "clinic", "--mode", "live"], env, { umask: "022" })).code).toBe(0);

  const names = readdirSync(dataDir, { recursive: true, encoding: "utf8" });
  // The database with its WAL and SHM, the key, the lock files and the stored audio are all there.
  for (const name of ["parley.db", "parley.db-wal", "parley.db-shm", "secret.key", "server.lock", "server.json"]) expect(names).toContain(name);
  expect(names.filter((n) => n.startsWith("audio/") && n.includes(`${rec.id}/`)).length).toBeGreaterThan(0);
  expect(widerThanPrivate(dataDir)).toEqual([]);
  server.proc.kill("SIGTERM");
  expect(await server.proc.exited).toBe(0);
});

test("doctor names files and folders others can read, and the command that fixes them", async () => {
  const dataDir = makeTempDir();
  const env = { PARLEY_DATA_DIR: dataDir, PARLEY_MODELS_DIR: join(dataDir, "models") };
  const check = async () => {
    const { stdout } = await parley(["doctor", "--json"], env);
    return (JSON.parse(stdout) as { check: string; ok: boolean; detail: string }[]).find((c) => c.check === "data dir permissions");
  };
  // What an earlier version left under umask 022.
  mkdirSync(join(dataDir, "audio"), { mode: 0o755 });
  chmodSync(join(dataDir, "audio"), 0o755);
  writeFileSync(join(dataDir, "parley.db"), "", { mode: 0o644 });
  chmodSync(join(dataDir, "parley.db"), 0o644);
  const found = await check();
  expect(found?.ok).toBe(false);
  expect(found?.detail).toContain("audio");
  expect(found?.detail).toContain("parley.db");
  expect(found?.detail).toContain(`chmod -R go-rwx ${dataDir}`);

  expect(Bun.spawnSync(["chmod", "-R", "go-rwx", dataDir]).exitCode).toBe(0);
  expect(await check()).toMatchObject({ ok: true });
}, 60_000);
