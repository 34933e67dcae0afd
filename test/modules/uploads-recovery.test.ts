// Uploads that go wrong and must still end well: verification jobs that die or are orphaned,
// chunks lost from storage, and the repair of an integrity failure.
import { beforeAll, describe, expect, test } from "bun:test";
import { registerBackgroundWork, startBackgroundWork } from "../../src/background";
import { buildDeps } from "../../src/boot";
import type { AudioDecoder } from "../../src/engines/audio";
import { FfmpegAudioDecoder, findFfmpeg } from "../../src/engines/ffmpeg-audio";
import { createLogger } from "../../src/log";
import { makeTenant, makeTestApp, waitFor } from "../helpers";
import { captureAutoTranscriptions, createRecording, fixture, put, sha256, type T, type Tenant } from "./recordings-support";

/** ffmpeg failing for a while (killed, out of memory, storage unreachable): a fault verification must outlive. */
class FlakyAudio implements AudioDecoder {
  broken = false;
  constructor(private real: AudioDecoder) {}
  get binary() {
    return this.real.binary;
  }
  probe(path: string) {
    return this.broken ? Promise.reject(new Error("ffmpeg was killed")) : this.real.probe(path);
  }
  decodePcm16k(path: string, signal?: AbortSignal) {
    return this.real.decodePcm16k(path, signal);
  }
}

let t: T;
let acme: Tenant;
const audio = new FlakyAudio(new FfmpegAudioDecoder(findFfmpeg(process.env.PARLEY_FFMPEG_PATH)));

beforeAll(async () => {
  t = await makeTestApp({ engines: { audio } });
  acme = makeTenant(t.deps, "recovery");
  captureAutoTranscriptions(t);
});

const complete = (id: string, body: Record<string, unknown> = {}) => t.call("POST", `/v1/recordings/${id}/upload-complete`, { key: acme.test, body });
const statusOf = async (id: string) => (await t.call("GET", `/v1/recordings/${id}`, { key: acme.test })).body.status;
const verifyJobs = (id: string) =>
  t.deps.db.query<{ state: string }, [string]>("SELECT state FROM jobs WHERE dedupe_key = ? ORDER BY created_at, id").all(`verify:${id}`);

/** A second process on the same data directory, as after a restart: same database and storage, a new queue. */
function restart() {
  const deps = buildDeps(t.deps.config, { clock: t.clock, log: createLogger("silent"), engines: t.deps.engines });
  registerBackgroundWork(deps);
  startBackgroundWork(deps);
  deps.queue.register("transcriptions.auto", () => {});
  return deps;
}

/** A recording with a completion whose verification job has failed every attempt while ffmpeg was down. */
async function deadVerification(body: (bytes: Uint8Array) => Record<string, unknown>) {
  const rec = await createRecording(t, acme.test);
  const bytes = fixture("tone-3s.wav");
  await put(t, acme.test, rec.id, bytes);
  audio.broken = true;
  expect((await complete(rec.id, body(bytes))).status).toBe(425);
  for (let i = 0; i < 6; i++) {
    t.clock.advance(15 * 60_000);
    await t.deps.queue.drain();
  }
  expect(verifyJobs(rec.id).map((j) => j.state)).toEqual(["dead"]);
  audio.broken = false;
  return { rec, bytes };
}

describe("a verification job that died after its last attempt", () => {
  test("the next upload-complete retry queues it again, and the recording is uploaded", async () => {
    const { rec, bytes } = await deadVerification((b) => ({ sha256: sha256(b) }));
    expect((await complete(rec.id, { sha256: sha256(bytes) })).status).toBe(425);
    await t.deps.queue.drain();
    const done = await complete(rec.id, { sha256: sha256(bytes) });
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({ status: "uploaded", sha256: sha256(bytes) });
  });

  test("the periodic sweep queues it again without any client retry", async () => {
    const { rec } = await deadVerification((b) => ({ sha256: sha256(b) }));
    await t.runTask("resume-pending-verifications");
    await t.deps.queue.drain();
    expect(await statusOf(rec.id)).toBe("uploaded");
  });

  test("a restart queues it again", async () => {
    const { rec } = await deadVerification((b) => ({ sha256: sha256(b) }));
    const after = restart();
    await after.queue.drain();
    expect(await statusOf(rec.id)).toBe("uploaded");
    after.db.close();
  });
});

describe("verification interrupted by a crash", () => {
  test("a job leased by a worker that died is taken back when the next process starts its queue, and completes 200", async () => {
    const rec = await createRecording(t, acme.test);
    const bytes = fixture("tone-3s.wav");
    await put(t, acme.test, rec.id, bytes);
    const body = { sha256: sha256(bytes) };
    expect((await complete(rec.id, body)).status).toBe(425);
    // The dead process had leased the job and started it: its lease has not run out yet.
    const lease = new Date(t.clock.now().getTime() + 60_000).toISOString();
    t.deps.db
      .query("UPDATE jobs SET state = 'running', attempts = 1, leased_by = 'wrk_dead', lease_until = ? WHERE dedupe_key = ?")
      .run(lease, `verify:${rec.id}`);
    expect(await t.deps.queue.drain()).toBe(0);
    expect((await complete(rec.id, body)).status).toBe(425);

    const after = restart();
    after.queue.start();
    try {
      await waitFor("the resumed verification", async () => (await statusOf(rec.id)) === "uploaded");
    } finally {
      await after.queue.stop();
      after.db.close();
    }
    const done = await complete(rec.id, body);
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({ status: "uploaded", sha256: sha256(bytes) });
  });

  test("without a hash, a passing ffmpeg failure is 425 (retryable), never 500; the retry verifies", async () => {
    const rec = await createRecording(t, acme.test);
    await put(t, acme.test, rec.id, fixture("tone-3s.wav"));
    audio.broken = true;
    const r = await complete(rec.id);
    expect(r.status).toBe(425);
    expect(r.body.error.code).toBe("upload_verification_pending");
    audio.broken = false;
    expect((await complete(rec.id)).body).toMatchObject({ status: "uploaded" });
  });
});

describe("streaming chunks lost from storage", () => {
  test("re-sending an early chunk does not make the recording forget a lost later one", async () => {
    const rec = await createRecording(t, acme.test);
    const bytes = fixture("tone-3s.wav");
    const parts = [bytes.slice(0, 30_000), bytes.slice(30_000, 60_000), bytes.slice(60_000)];
    for (const i of [0, 1, 2]) await put(t, acme.test, rec.id, parts[i]!, { chunk_index: i });
    const keys = t.deps.db
      .query<{ storage_key: string }, [string]>("SELECT storage_key FROM recording_chunks WHERE recording_id = ? ORDER BY chunk_index")
      .all(rec.id);
    await t.deps.storage.remove(keys[0]!.storage_key);
    await t.deps.storage.remove(keys[2]!.storage_key);
    const first = await complete(rec.id);
    expect(first.status).toBe(409);
    expect(first.body.error.message).toContain("Chunk 0");
    await put(t, acme.test, rec.id, parts[0]!, { chunk_index: 0 });
    expect((await t.call("GET", `/v1/recordings/${rec.id}`, { key: acme.test })).body.chunk_count).toBe(3);
    const second = await complete(rec.id);
    expect(second.status).toBe(409);
    expect(second.body.error).toMatchObject({ code: "resource_conflict", param: "chunk_index" });
    expect(second.body.error.message).toContain("Chunk 2");
    await put(t, acme.test, rec.id, parts[2]!, { chunk_index: 2 });
    expect((await complete(rec.id)).body).toMatchObject({ status: "uploaded", chunk_count: 3, sha256: sha256(bytes), file_size_bytes: bytes.length });
  });
});

describe("repairing an integrity failure", () => {
  async function failedVerification(chunks: number[] | null) {
    const rec = await createRecording(t, acme.test);
    const bytes = fixture("tone-3s.wav");
    const corrupted = bytes.slice();
    corrupted[1000] = corrupted[1000]! ^ 0xff;
    const parts = chunks ? [corrupted.slice(0, 50_000), corrupted.slice(50_000)] : [corrupted];
    for (const [i, part] of parts.entries()) await put(t, acme.test, rec.id, part, chunks ? { chunk_index: i } : {});
    expect((await complete(rec.id, { sha256: sha256(bytes) })).status).toBe(425);
    await t.deps.queue.drain();
    expect(await statusOf(rec.id)).toBe("integrity_failure");
    return { rec, bytes };
  }
  const storedKeys = (id: string) =>
    [
      ...t.deps.db.query<{ k: string }, [string]>("SELECT storage_key AS k FROM recordings WHERE id = ? AND storage_key IS NOT NULL").all(id),
      ...t.deps.db.query<{ k: string }, [string]>("SELECT storage_key AS k FROM recording_chunks WHERE recording_id = ?").all(id),
    ].map((r) => r.k);

  test("a fresh URL drops the bad bytes: completing before a new PUT is staging_missing, never the old bytes accepted", async () => {
    const { rec, bytes } = await failedVerification(null);
    const [bad] = storedKeys(rec.id);
    expect(await t.deps.storage.size(bad!)).not.toBeNull();
    expect((await t.call("POST", `/v1/recordings/${rec.id}/upload-url`, { key: acme.test, body: {} })).status).toBe(200);
    const early = await complete(rec.id);
    expect(early.status).toBe(409);
    expect(early.body.error.code).toBe("encrypted_upload_v2_staging_missing");
    await t.deps.queue.drain();
    expect(await t.deps.storage.size(bad!)).toBeNull();
    await put(t, acme.test, rec.id, bytes);
    expect((await complete(rec.id, { sha256: sha256(bytes) })).status).toBe(425);
    await t.deps.queue.drain();
    expect((await complete(rec.id, { sha256: sha256(bytes) })).body).toMatchObject({ status: "uploaded", sha256: sha256(bytes) });
  });

  test("streaming: every chunk must be sent again", async () => {
    const { rec, bytes } = await failedVerification([0, 1]);
    const bad = storedKeys(rec.id);
    expect(bad).toHaveLength(2);
    const good = [bytes.slice(0, 50_000), bytes.slice(50_000)];
    await put(t, acme.test, rec.id, good[0]!, { chunk_index: 0 });
    expect(await statusOf(rec.id)).toBe("streaming");
    const partial = await complete(rec.id);
    expect(partial.status).toBe(409);
    expect(partial.body.error.message).toContain("Chunk 1");
    await t.deps.queue.drain();
    for (const key of bad) expect(await t.deps.storage.size(key)).toBeNull();
    await put(t, acme.test, rec.id, good[1]!, { chunk_index: 1 });
    expect((await complete(rec.id)).body).toMatchObject({ status: "uploaded", chunk_count: 2, sha256: sha256(bytes) });
  });
});
