// parley backup / restore (decision 087) with real processes: a backup taken while a server
// serves and takes uploads restores into a fresh data dir that a second server serves from.
import { expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { makeTempDir, waitFor } from "../helpers";
import { fixture, sha256 } from "../modules/recordings-support";
import { apiClient, freePort, parley, startServer } from "../support/server-process";

type Api = Awaited<ReturnType<typeof apiClient>>;
const FORMATS = ["tone-3s.wav", "tone-3s.flac", "tone-3s.mp3", "tone-3s.opus"];

/** Creates a recording, PUTs `bytes` and waits until upload-complete is accepted (verified). */
async function upload(api: Api, bytes: Uint8Array<ArrayBuffer>): Promise<string> {
  const rec = (await (await api("POST", "/recordings", {})).json()) as { id: string };
  const url = (await (await api("POST", `/recordings/${rec.id}/upload-url`, {})).json()).upload_url as string;
  expect((await fetch(url, { method: "PUT", body: bytes })).status).toBe(200);
  const completion = { sha256: sha256(bytes), file_size_bytes: bytes.length };
  await waitFor(`recording ${rec.id} verified`, async () => (await api("POST", `/recordings/${rec.id}/upload-complete`, completion)).status === 200);
  return rec.id;
}

async function audioOf(api: Api, id: string): Promise<Uint8Array> {
  const r = await api("GET", `/recordings/${id}/audio`);
  expect(r.status).toBe(200);
  return new Uint8Array(await r.arrayBuffer());
}

/** Every path under `dir` with its mode bits beyond the owner's. */
const notPrivate = (dir: string) =>
  [".", ...readdirSync(dir, { recursive: true, encoding: "utf8" })].filter((p) => (statSync(join(dir, p)).mode & 0o077) !== 0);

test("a backup taken while the server takes uploads restores into a fresh dir that a second server serves the same audio from", async () => {
  const root = makeTempDir();
  const env = { PARLEY_DATA_DIR: join(root, "data"), PARLEY_PORT: String(freePort()), PARLEY_LOG_LEVEL: "silent" };
  const server = await startServer(env);
  const api = await apiClient(env, server.base);
  const before: string[] = [];
  for (const name of FORMATS) before.push(await upload(api, fixture(name)));

  // Uploads keep arriving while the backup runs.
  let backingUp = true;
  const during: string[] = [];
  const uploads = (async () => {
    for (let i = 0; backingUp; i++) during.push(await upload(api, fixture(FORMATS[i % FORMATS.length]!)));
  })();
  const backupDir = join(root, "backup");
  const backup = await parley(["backup", backupDir], env);
  backingUp = false;
  await uploads;
  expect(backup.stderr).toBe("");
  expect(backup.code).toBe(0);
  expect(backup.stdout).toContain(`to ${backupDir}:`);

  const manifest = JSON.parse(readFileSync(join(backupDir, "manifest.json"), "utf8"));
  expect(manifest).toMatchObject({ format: "parley-backup", format_version: 1, audio: { storage: "local" }, secret: "file", missing_objects: [] });
  const paths = (manifest.files as { path: string }[]).map((f) => f.path);
  expect(paths).toContain("parley.db");
  expect(paths).toContain("secret.key");
  for (const id of before) expect(paths.some((p) => p.startsWith("audio/") && p.includes(`/${id}/`))).toBe(true);
  expect(notPrivate(backupDir)).toEqual([]);
  expect(readdirSync(root).filter((n) => n.includes("partial"))).toEqual([]);

  server.proc.kill("SIGTERM");
  expect(await server.proc.exited).toBe(0);

  const restoredEnv = { ...env, PARLEY_DATA_DIR: join(root, "restored"), PARLEY_PORT: String(freePort()) };
  const restore = await parley(["restore", backupDir], restoredEnv);
  expect(restore.stderr).toBe("");
  expect(restore.code).toBe(0);
  expect(notPrivate(restoredEnv.PARLEY_DATA_DIR)).toEqual([]);

  const second = await startServer(restoredEnv);
  // The same key works: it is the same database.
  const key = (await parley(["keys", "create", "--project", "clinic", "--mode", "test", "--json"], restoredEnv)).stdout;
  const api2: Api = (method, path, body) =>
    fetch(`${second.base}/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${JSON.parse(key).key}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  for (const [i, id] of before.entries()) expect(await audioOf(api2, id)).toEqual(fixture(FORMATS[i]!));
  // Every verified recording of the backup, uploaded before or during it, has its audio, byte for byte.
  const listed = (await (await api2("GET", "/recordings?limit=100")).json()).data as { id: string; sha256: string | null; status: string }[];
  expect(listed.length).toBeGreaterThanOrEqual(before.length);
  for (const r of listed.filter((r) => r.sha256 !== null)) expect(sha256(await audioOf(api2, r.id))).toBe(r.sha256!);
  expect(during.length).toBeGreaterThan(0);
  second.proc.kill("SIGTERM");
  expect(await second.proc.exited).toBe(0);
}, 120_000);

test("restore refuses a tampered backup naming the file, a running server's data dir, and a dir with data unless --force", async () => {
  const root = makeTempDir();
  const env = { PARLEY_DATA_DIR: join(root, "data"), PARLEY_PORT: String(freePort()), PARLEY_LOG_LEVEL: "silent" };
  const server = await startServer(env);
  const api = await apiClient(env, server.base);
  const id = await upload(api, fixture("tone-3s.wav"));
  const backupDir = join(root, "backup");
  expect((await parley(["backup", backupDir], env)).code).toBe(0);

  // Over the running server's own data dir: refused, nothing touched.
  const busy = await parley(["restore", backupDir, "--force"], env);
  expect(busy.code).toBe(1);
  expect(busy.stderr).toContain(`cannot restore while a server runs: ${env.PARLEY_DATA_DIR} is in use by another parley server (pid ${server.proc.pid}`);
  expect(await audioOf(api, id)).toEqual(fixture("tone-3s.wav"));
  server.proc.kill("SIGTERM");
  expect(await server.proc.exited).toBe(0);

  // A backup folder is not overwritten by another backup.
  expect((await parley(["backup", backupDir], env)).code).toBe(1);

  // Stopped, but the data dir holds data: refused without --force; with it, the old data is moved aside.
  const full = await parley(["restore", backupDir], env);
  expect(full.code).toBe(1);
  expect(full.stderr).toContain("already holds data");
  expect(full.stderr).toContain("--force");
  const forced = await parley(["restore", backupDir, "--force"], env);
  expect(forced.stderr).toBe("");
  expect(forced.code).toBe(0);
  const aside = readdirSync(env.PARLEY_DATA_DIR).filter((n) => n.startsWith(".replaced-"));
  expect(aside.length).toBe(1);
  expect(existsSync(join(env.PARLEY_DATA_DIR, aside[0]!, "parley.db"))).toBe(true);

  // One byte changed in a copied audio file: refused with exit 1 naming it, before anything is written.
  const manifest = JSON.parse(readFileSync(join(backupDir, "manifest.json"), "utf8"));
  const audio = (manifest.files as { path: string }[]).find((f) => f.path.startsWith("audio/"))!.path;
  const bytes = readFileSync(join(backupDir, audio));
  bytes[100] = bytes[100]! ^ 0xff;
  writeFileSync(join(backupDir, audio), bytes);
  const fresh = { ...env, PARLEY_DATA_DIR: join(root, "fresh") };
  const tampered = await parley(["restore", backupDir], fresh);
  expect(tampered.code).toBe(1);
  expect(tampered.stderr).toContain("is damaged; nothing was restored");
  expect(tampered.stderr).toContain(`${audio}: SHA-256`);
  expect(existsSync(fresh.PARLEY_DATA_DIR)).toBe(false);

  expect((await parley(["restore", join(root, "nowhere")], fresh)).stderr).toContain("is not a parley backup");
}, 120_000);

test("audio the database refers to but storage lost: the backup still completes, lists it as missing and exits 1", async () => {
  const root = makeTempDir();
  const env = { PARLEY_DATA_DIR: join(root, "data"), PARLEY_PORT: String(freePort()), PARLEY_LOG_LEVEL: "silent" };
  const server = await startServer(env);
  const api = await apiClient(env, server.base);
  const id = await upload(api, fixture("tone-3s.wav"));
  server.proc.kill("SIGTERM");
  expect(await server.proc.exited).toBe(0);
  const audio = readdirSync(join(env.PARLEY_DATA_DIR, "audio"), { recursive: true, encoding: "utf8" }).filter(
    (p) => p.includes(`/${id}/`) && statSync(join(env.PARLEY_DATA_DIR, "audio", p)).isFile(),
  );
  expect(audio.length).toBe(1);
  rmSync(join(env.PARLEY_DATA_DIR, "audio", audio[0]!));

  const backup = await parley(["backup", join(root, "backup")], env);
  expect(backup.code).toBe(1);
  expect(backup.stderr).toContain("the backup is written, but the database refers to 1 object storage does not have");
  expect(backup.stderr).toContain(audio[0]!);
  expect(JSON.parse(readFileSync(join(root, "backup", "manifest.json"), "utf8")).missing_objects).toEqual([audio[0]]);
  expect((await parley(["restore", join(root, "backup")], { ...env, PARLEY_DATA_DIR: join(root, "restored") })).code).toBe(0);
}, 60_000);

test("parley --version prints the package version", async () => {
  const pkg = JSON.parse(readFileSync(join(import.meta.dir, "..", "..", "package.json"), "utf8"));
  const r = await parley(["--version"], { PARLEY_PORT: "not-a-port" });
  expect(r.code).toBe(0);
  expect(r.stdout).toBe(`parley ${pkg.version}\n`);
});
