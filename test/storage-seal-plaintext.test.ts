// Audio stored before encryption at rest is sealed where it lies by a job enqueued at start
// (decision 107): afterwards the bytes on disk are no longer the upload, while downloads and
// ranges return the same bytes before, during and after; a failed rewrite loses nothing.
import { describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { createApp } from "../src/app";
import { registerBackgroundWork } from "../src/background";
import { buildDeps, closeDeps, stopDeps } from "../src/boot";
import { plaintextAudioCheck } from "../src/cli/doctor-encryption";
import { ManualClock } from "../src/clock";
import { loadConfig } from "../src/config";
import type { Deps } from "../src/deps";
import { createLogger } from "../src/log";
import { chunksOf, type Storage } from "../src/storage";
import { DataKeys } from "../src/storage/encryption/data-keys";
import { EncryptedStorage } from "../src/storage/encryption/encrypted-storage";
import { deriveMasterKey } from "../src/storage/encryption/master-key";
import { CHUNK } from "../src/storage/encryption/sealed-format";
import { LocalStorage } from "../src/storage/local";
import { makeTenant, makeTestApp, makeTestDeps } from "./helpers";
import { sha256, uploadedRecording } from "./modules/recordings-support";

/** A test app on `deps` (the helpers' call, without the OpenAPI check this test does not need). */
function appOn(deps: Deps) {
  const tasks = registerBackgroundWork(deps);
  const runTask = (name: string) => tasks.find((task) => task.name === name)!.run();
  const app = createApp(deps);
  const call = async (method: string, path: string, opts: { key?: string; body?: unknown; rawBody?: BodyInit; headers?: Record<string, string> } = {}) => {
    const headers: Record<string, string> = { ...opts.headers, ...(opts.key ? { authorization: `Bearer ${opts.key}` } : {}) };
    const body = opts.body === undefined ? opts.rawBody : JSON.stringify(opts.body);
    if (opts.body !== undefined) headers["content-type"] = "application/json";
    const res = await app.handle(new Request(`http://localhost${path}`, { method, headers, body }));
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null, headers: res.headers };
  };
  const audio = async (key: string, id: string, range?: string) => {
    const res = await app.handle(
      new Request(`http://localhost/v1/recordings/${id}/audio`, { headers: { authorization: `Bearer ${key}`, ...(range ? { range } : {}) } }),
    );
    return { status: res.status, bytes: Buffer.from(await res.arrayBuffer()) };
  };
  return { deps, app, call, audio, runTask };
}

async function* once(bytes: Uint8Array) {
  yield bytes;
}
async function readAll(stream: ReadableStream<Uint8Array>): Promise<Buffer> {
  const parts: Uint8Array[] = [];
  for await (const p of chunksOf(stream)) parts.push(p);
  return Buffer.concat(parts);
}
const files = (root: string) => readdirSync(root, { recursive: true, encoding: "utf8" }).filter((p) => !p.startsWith(".tmp") && p.split("/").length === 4);

describe("sealing audio stored before encryption at rest", () => {
  test("uploaded unencrypted, then after a restart the background task seals it: not the upload on disk, identical downloads", async () => {
    // A server of the version before encryption at rest: the same app over the bare local storage.
    const before = await makeTestDeps();
    const dataDir = before.config.dataDir;
    const root = join(dataDir, "audio");
    const old = appOn({ ...before, storage: new LocalStorage(root) });
    const tenant = makeTenant(before);
    const { recording, bytes } = await uploadedRecording(old as never, tenant.test, "tone-3s.wav");
    const [file] = files(root);
    expect(readFileSync(join(root, file!)).equals(Buffer.from(bytes))).toBe(true); // plaintext on disk
    expect(await plaintextAudioCheck(before.config)).toMatchObject({
      warning: true,
      detail: expect.stringContaining("1 of 1 stored audio object(s) are still plaintext"),
    });

    // The restart with encryption at rest: the new version reads it as it is until the job has run.
    const clock = new ManualClock();
    const deps = buildDeps(loadConfig({ PARLEY_DATA_DIR: dataDir, PARLEY_LOG_LEVEL: "silent" }), { clock, log: createLogger("silent") });
    const now = appOn(deps);
    const n = bytes.length;
    const ranges: [string, number, number][] = [
      ["bytes=0-99", 0, 99],
      [`bytes=${CHUNK - 10}-${CHUNK + 10}`, CHUNK - 10, CHUNK + 10],
      ["bytes=-500", n - 500, n - 1],
      [`bytes=${n - 1}-`, n - 1, n - 1],
    ];
    const expectIdentical = async () => {
      const whole = await now.audio(tenant.test, recording.id);
      expect({ status: whole.status, sha: sha256(whole.bytes) }).toEqual({ status: 200, sha: sha256(bytes) });
      for (const [range, start, end] of ranges) {
        const part = await now.audio(tenant.test, recording.id, range);
        expect({ range, status: part.status, same: part.bytes.equals(Buffer.from(bytes.subarray(start, end + 1))) }).toEqual({
          range,
          status: 206,
          same: true,
        });
      }
    };
    await expectIdentical();

    // During: the pass the task starts runs while ranges are being read; every read returns the upload's bytes.
    await now.runTask("seal-plaintext-audio");
    const reads = Array.from({ length: 8 }, () => expectIdentical());
    await Promise.all([deps.queue.drain(), ...reads]);
    await now.runTask("seal-plaintext-audio"); // a pass that met the object in use starts again at the next tick
    await deps.queue.drain();

    const sealed = readFileSync(join(root, file!));
    expect(sealed.subarray(0, 8).toString()).toBe("PRLYAE01");
    expect(sha256(sealed)).not.toBe(sha256(bytes));
    expect(sealed.includes(Buffer.from(bytes.subarray(50_000, 50_064)))).toBe(false);
    await expectIdentical(); // after
    expect(await plaintextAudioCheck(deps.config)).toMatchObject({ detail: "all 1 stored audio object(s) are sealed" });
    const passes = deps.db.query<{ state: string }, []>("SELECT state FROM jobs WHERE type = 'storage.seal_plaintext'").all();
    expect(passes.filter((p) => p.state !== "done")).toEqual([]);
    // Once a pass was clean, the task starts no more until the next start.
    await now.runTask("seal-plaintext-audio");
    expect(deps.db.query("SELECT count(*) AS n FROM jobs WHERE type = 'storage.seal_plaintext' AND state = 'queued'").get()).toEqual({ n: 0 });
    await stopDeps(deps, 1_000);
    closeDeps(deps);
  });

  test("a rewrite waits for a reader holding the object, and one that fails half-way leaves the plaintext readable", async () => {
    const deps = await makeTestDeps();
    const tenant = makeTenant(deps);
    const root = join(deps.config.dataDir, "audio");
    const storage = deps.storage as EncryptedStorage;
    const key = `${tenant.project.id}/test/rec_legacy/original`;
    const plain = randomBytes(3 * CHUNK + 11);
    await new LocalStorage(root).write(key, once(plain));

    // ffmpeg reading it by path holds it: the rewrite is refused, and succeeds once it is done.
    const during = await storage.withLocalFile(key, async (path) => ({ outcome: await storage.sealInPlace(key), same: readFileSync(path).equals(plain) }));
    expect(during).toEqual({ outcome: "busy", same: true });

    // A storage that fails in the middle of writing (a crash, a full disk): nothing is lost.
    const failing: Storage = Object.assign(Object.create(new LocalStorage(root)), {
      async write(k: string, body: AsyncIterable<Uint8Array>) {
        return new LocalStorage(root).write(
          k,
          (async function* () {
            let n = 0;
            for await (const part of body) {
              if ((n += part.length) > CHUNK) throw new Error("the process died here");
              yield part;
            }
          })(),
        );
      },
    });
    const keys = new DataKeys(deps.db, deriveMasterKey(deps.serverSecret));
    await expect(new EncryptedStorage(failing, keys, deps.clock, deps.scratch).sealInPlace(key)).rejects.toThrow("the process died here");
    expect(readFileSync(join(root, key)).equals(plain)).toBe(true);
    expect(readdirSync(join(root, ".tmp"))).toEqual([]);
    expect((await readAll(storage.read(key, { start: CHUNK, end: CHUNK + 99 }))).equals(plain.subarray(CHUNK, CHUNK + 100))).toBe(true);

    expect(await storage.sealInPlace(key)).toBe("sealed");
    expect(await storage.sealInPlace(key)).toBe("already");
    expect(readFileSync(join(root, key)).subarray(0, 8).toString()).toBe("PRLYAE01");
    expect((await readAll(storage.read(key))).equals(plain)).toBe(true);
    expect(await storage.size(key)).toBe(plain.length);
  });

  test("an object that cannot be sealed (of no project) is left readable and does not stop the others", async () => {
    const t = await makeTestApp();
    const tenant = makeTenant(t.deps);
    const root = join(t.deps.config.dataDir, "audio");
    const orphan = "proj_gone/test/rec_x/original";
    const kept = `${tenant.project.id}/test/rec_y/original`;
    const plain = randomBytes(1000);
    for (const key of [orphan, kept]) await new LocalStorage(root).write(key, once(plain));
    const pass = async () => {
      await t.runTask("seal-plaintext-audio");
      return t.deps.queue.drain();
    };
    await pass();
    expect(readFileSync(join(root, kept)).subarray(0, 8).toString()).toBe("PRLYAE01");
    expect(readFileSync(join(root, orphan)).equals(plain)).toBe(true);
    expect(await pass()).toBe(0); // the failed object is tried again an hour later, not at every tick
    t.clock.advance(3_600_000);
    expect(await pass()).toBe(1);
  });
});
