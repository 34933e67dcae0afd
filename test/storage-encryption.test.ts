// Encryption at rest (decision 105): audio is sealed on disk under its project's data key, yet
// every download and range is the uploaded bytes; tampering or a cut-off object fails; a
// destroyed data key makes the audio unreadable; rotating the master key rewrites no audio.
import { describe, expect, test } from "bun:test";
import { createHash, randomBytes } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { buildDeps, closeDeps } from "../src/boot";
import { encryptionCheck } from "../src/cli/doctor-encryption";
import { loadConfig } from "../src/config";
import { ManualClock } from "../src/clock";
import { createLogger } from "../src/log";
import { chunksOf } from "../src/storage";
import { DataKeys } from "../src/storage/encryption/data-keys";
import { EncryptedStorage } from "../src/storage/encryption/encrypted-storage";
import { deriveMasterKey, MasterKeyError, readMasterKeyFile } from "../src/storage/encryption/master-key";
import { lockDataDir } from "../src/data-dir/lock";
import { keysCommand } from "../src/modules/keys/cli";
import { rotateMasterKey } from "../src/storage/encryption/rotate-master";
import { CHUNK } from "../src/storage/encryption/sealed-format";
import { LocalStorage } from "../src/storage/local";
import { scratchRoot } from "../src/storage/scratch";
import { makeTempDir, makeTenant, makeTestApp, makeTestDeps } from "./helpers";
import { uploadedRecording } from "./modules/recordings-support";

const hash = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");
async function* once(bytes: Uint8Array) {
  // In uneven pieces, as a socket delivers them.
  for (let i = 0; i < bytes.length; i += 40_000) yield bytes.subarray(i, i + 40_000);
}
async function readAll(stream: ReadableStream<Uint8Array>): Promise<Buffer> {
  const parts: Uint8Array[] = [];
  for await (const p of chunksOf(stream)) parts.push(p);
  return Buffer.concat(parts);
}
/** Every stored file under the audio folder but temp files. */
const storedFiles = (root: string) =>
  readdirSync(root, { recursive: true, encoding: "utf8" })
    .filter((p) => !p.startsWith(".tmp") && statSync(join(root, p)).isFile())
    .map((p) => join(root, p));

describe("through the API", () => {
  test("the audio on disk is not the uploaded bytes, yet downloads identical, whole and in ranges across chunks", async () => {
    const t = await makeTestApp();
    const tenant = makeTenant(t.deps);
    const { recording, bytes } = await uploadedRecording(t, tenant.test);
    const [file] = storedFiles(join(t.deps.config.dataDir, "audio"));
    const onDisk = readFileSync(file!);
    expect(onDisk.subarray(0, 8).toString()).toBe("PRLYAE01");
    expect(hash(onDisk)).not.toBe(hash(bytes));
    // Not one 64-byte run of the upload (past the WAV header's zeros) appears on disk.
    for (const at of [100, 50_000, 90_000]) expect(onDisk.includes(Buffer.from(bytes.subarray(at, at + 64)))).toBe(false);

    const whole = await t.app.handle(
      new Request(`http://localhost/v1/recordings/${recording.id}/audio`, { headers: { authorization: `Bearer ${tenant.test}` } }),
    );
    expect(whole.status).toBe(200);
    expect(hash(new Uint8Array(await whole.arrayBuffer()))).toBe(hash(bytes));

    const n = bytes.length;
    const ranges: [string, number, number][] = [
      ["bytes=0-99", 0, 99],
      [`bytes=${CHUNK - 10}-${CHUNK + 10}`, CHUNK - 10, CHUNK + 10], // across the chunk boundary
      [`bytes=${CHUNK}-`, CHUNK, n - 1], // the second chunk from its first byte
      ["bytes=-500", n - 500, n - 1], // a suffix
      [`bytes=${n - 1}-${n + 100}`, n - 1, n - 1], // the last byte, end clipped
    ];
    for (const [header, start, end] of ranges) {
      const r = await t.app.handle(
        new Request(`http://localhost/v1/recordings/${recording.id}/audio`, { headers: { authorization: `Bearer ${tenant.test}`, range: header } }),
      );
      expect(r.status).toBe(206);
      expect(r.headers.get("content-range")).toBe(`bytes ${start}-${end}/${n}`);
      expect(Buffer.from(await r.arrayBuffer()).equals(Buffer.from(bytes.subarray(start, end + 1)))).toBe(true);
    }
  });
});

describe("the sealed storage", () => {
  async function sealedStore() {
    const deps = await makeTestDeps();
    const tenant = makeTenant(deps);
    return { deps, storage: deps.storage, root: join(deps.config.dataDir, "audio"), key: (name: string) => `${tenant.project.id}/test/rec_1/${name}` };
  }

  test("every size (empty, around a chunk, several chunks) reads back whole and in any range", async () => {
    const { deps, storage, key } = await sealedStore();
    for (const size of [0, 1, CHUNK - 1, CHUNK, CHUNK + 1, 3 * CHUNK + 5]) {
      const bytes = randomBytes(size);
      expect((await storage.write(key(`s${size}`), once(bytes))).size).toBe(size);
      expect(await storage.size(key(`s${size}`))).toBe(size);
      expect((await readAll(storage.read(key(`s${size}`)))).equals(bytes)).toBe(true);
      for (let i = 0; i < 5 && size > 0; i++) {
        const start = Math.floor(Math.random() * size);
        const end = start + Math.floor(Math.random() * (size - start));
        expect((await readAll(storage.read(key(`s${size}`), { start, end }))).equals(bytes.subarray(start, end + 1))).toBe(true);
      }
    }
    // ffmpeg's path holds the plaintext: in the data dir's scratch (decision 226), gone once used.
    const bytes = randomBytes(CHUNK + 7);
    await storage.write(key("probe"), once(bytes));
    let copy = "";
    const same = await storage.withLocalFile(key("probe"), async (path) => {
      copy = path;
      return readFileSync(path).equals(bytes);
    });
    expect(same).toBe(true);
    expect(copy.startsWith(`${scratchRoot(deps.config.dataDir)}/`)).toBe(true);
    expect(existsSync(copy)).toBe(false);
  });

  test("a changed byte, or an object cut off at a chunk boundary, fails the read instead of returning other audio", async () => {
    const { storage, root, key } = await sealedStore();
    await storage.write(key("a"), once(randomBytes(2 * CHUNK + 100)));
    const [file] = storedFiles(root);
    const sealed = readFileSync(file!);
    sealed[CHUNK + 200] = sealed[CHUNK + 200]! ^ 1;
    writeFileSync(file!, sealed);
    await expect(readAll(storage.read(key("a")))).rejects.toThrow();
    // The first chunk alone still reads: a range decrypts only what it needs.
    expect((await readAll(storage.read(key("a"), { start: 0, end: 10 }))).length).toBe(11);

    await storage.write(key("b"), once(randomBytes(3 * CHUNK)));
    const b = storedFiles(root).find((f) => f.endsWith("/b"))!;
    truncateSync(b, 20 + 2 * (CHUNK + 16)); // the last chunk gone: two whole chunks remain
    await expect(readAll(storage.read(key("b")))).rejects.toThrow();
  });

  test("objects written before encryption are read as they are", async () => {
    const { storage, root, key } = await sealedStore();
    const plain = randomBytes(1000);
    await new LocalStorage(root).write(key("legacy"), once(plain));
    expect(await storage.size(key("legacy"))).toBe(1000);
    expect((await readAll(storage.read(key("legacy"), { start: 10, end: 19 }))).equals(plain.subarray(10, 20))).toBe(true);
    expect((await readAll(storage.read(key("legacy")))).equals(plain)).toBe(true);
    await new LocalStorage(root).write(key("tiny"), once(Buffer.from("RIFF")));
    expect((await readAll(storage.read(key("tiny")))).toString()).toBe("RIFF");
  });

  test("deleting the project's data key makes its audio unreadable (cryptographic erasure)", async () => {
    const deps = await makeTestDeps();
    const tenant = makeTenant(deps);
    const key = `${tenant.project.id}/test/rec_1/a`;
    await deps.storage.write(key, once(randomBytes(500)));
    deps.db.query("DELETE FROM data_keys WHERE project_id = ?").run(tenant.project.id);
    // A new process (no key cached) has nothing to decrypt with.
    const fresh = new EncryptedStorage(
      new LocalStorage(join(deps.config.dataDir, "audio")),
      new DataKeys(deps.db, deriveMasterKey(deps.serverSecret)),
      deps.clock,
      deps.scratch,
    );
    await expect(readAll(fresh.read(key))).rejects.toThrow(/data key .* is destroyed/);
  });
});

describe("the master key", () => {
  test("rotate-master re-wraps the data keys without touching the audio; the old master is then refused at start", async () => {
    const dataDir = makeTempDir();
    const env = { PARLEY_DATA_DIR: dataDir, PARLEY_MODELS_DIR: join(dataDir, "models"), PARLEY_LOG_LEVEL: "silent" };
    const options = { clock: new ManualClock(), log: createLogger("silent") };
    const deps = buildDeps(loadConfig(env), options);
    const tenant = makeTenant(deps);
    const key = `${tenant.project.id}/test/rec_1/a`;
    const bytes = randomBytes(CHUNK * 2);
    await deps.storage.write(key, once(bytes));
    const file = storedFiles(join(dataDir, "audio"))[0]!;
    const before = hash(readFileSync(file));

    const newKeyFile = join(makeTempDir(), "master.key");
    const rotated = rotateMasterKey(deps.db, deps.config, deps.serverSecret, newKeyFile);
    closeDeps(deps);
    expect(rotated.rewrapped).toBe(1);
    expect(statSync(newKeyFile).mode & 0o777).toBe(0o600);
    expect(hash(readFileSync(file))).toBe(before); // no audio rewritten

    expect(() => buildDeps(loadConfig(env), options)).toThrow(MasterKeyError);
    const after = buildDeps(loadConfig({ ...env, PARLEY_MASTER_KEY_FILE: newKeyFile }), options);
    expect((await readAll(after.storage.read(key))).equals(bytes)).toBe(true);
    closeDeps(after);
  });

  test("parley keys rotate-master refuses while a server holds the data dir, and re-wraps once it is stopped", async () => {
    const deps = await makeTestDeps();
    await deps.storage.write(`${makeTenant(deps).project.id}/test/rec_1/a`, once(randomBytes(10)));
    const server = lockDataDir(deps.config.dataDir, new Date()); // as a running server holds it
    const newKeyFile = join(makeTempDir(), "master.key");
    expect(() => keysCommand(deps, ["rotate-master", "--new-key-file", newKeyFile])).toThrow(/in use by another parley server/);
    expect(existsSync(newKeyFile)).toBe(false);
    server.release();
    keysCommand(deps, ["rotate-master", "--new-key-file", newKeyFile]);
    expect(deps.db.query<{ id: string }, []>("SELECT DISTINCT master_key_id AS id FROM data_keys").all()).toEqual([{ id: readMasterKeyFile(newKeyFile).id }]);
  });

  test("a master key file that is not 64 hex digits is refused, naming it", () => {
    const dir = makeTempDir();
    writeFileSync(join(dir, "bad.key"), "short");
    expect(() => buildDeps(loadConfig({ PARLEY_DATA_DIR: dir, PARLEY_MASTER_KEY_FILE: join(dir, "bad.key"), PARLEY_LOG_LEVEL: "silent" }))).toThrow(
      /bad\.key must hold a 256-bit key as 64 hex digits/,
    );
  });
});

describe("doctor", () => {
  test("warns when the master key is derived from secret.key beside the audio, not when it comes from elsewhere", () => {
    expect(encryptionCheck(loadConfig({}))).toMatchObject({ ok: true, warning: true, detail: expect.stringContaining("beside the audio it protects") });
    expect(encryptionCheck(loadConfig({ PARLEY_MASTER_KEY_FILE: "/run/credentials/parley/master.key" }))).toEqual({
      check: "encryption at rest",
      ok: true,
      detail: expect.stringContaining("/run/credentials/parley/master.key"),
    });
    expect(encryptionCheck(loadConfig({ PARLEY_SECRET: "x".repeat(40) })).warning).toBeUndefined();
  });
});
