import { beforeAll, describe, expect, test } from "bun:test";
import { makeTenant, makeTestApp } from "../helpers";
import {
  captureAutoTranscriptions,
  createRecording,
  deviceToken,
  eventsOf,
  fixture,
  pathOf,
  put,
  sha256,
  type T,
  type Tenant,
  uploadedRecording,
} from "./recordings-support";

let t: T;
let acme: Tenant;
let other: Tenant;
let autos: unknown[];

beforeAll(async () => {
  t = await makeTestApp();
  acme = makeTenant(t.deps, "uploads-acme");
  other = makeTenant(t.deps, "uploads-other");
  autos = captureAutoTranscriptions(t);
});

const complete = (id: string, body: Record<string, unknown>, key = acme.test) => t.call("POST", `/v1/recordings/${id}/upload-complete`, { key, body });

describe("upload-url", () => {
  test("returns a PUT URL on this server carrying an up_ token, with headers and expiry", async () => {
    const rec = await createRecording(t, acme.test);
    const r = await t.call("POST", `/v1/recordings/${rec.id}/upload-url`, { key: acme.test, body: { content_type: "audio/mpeg", file_size_bytes: 1000 } });
    expect(r.status).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(["expires_at", "headers", "method", "upload_url"]);
    expect(r.body.method).toBe("PUT");
    expect(r.body.upload_url).toMatch(new RegExp(`^${t.deps.config.publicUrl}/v1/uploads/up_`));
    expect(r.body.headers).toEqual({ "Content-Type": "audio/mpeg" });
    expect(Date.parse(r.body.expires_at) - t.clock.now().getTime()).toBe(t.deps.config.uploads.tokenTtlSeconds * 1000);
  });

  test("a declared size over the limit is 413 up front", async () => {
    const rec = await createRecording(t, acme.test);
    const r = await t.call("POST", `/v1/recordings/${rec.id}/upload-url`, { key: acme.test, body: { file_size_bytes: t.deps.config.uploads.maxBytes + 1 } });
    expect(r.status).toBe(413);
    expect(r.body.error).toMatchObject({ code: "payload_too_large", param: "file_size_bytes" });
  });

  test("unknown recording 404; restricted key without recordings:write 403", async () => {
    expect((await t.call("POST", "/v1/recordings/rec_nope/upload-url", { key: acme.test, body: {} })).status).toBe(404);
    const rec = await createRecording(t, acme.test);
    const readOnly = acme.key("test", { scopes: ["recordings:read"] });
    expect((await t.call("POST", `/v1/recordings/${rec.id}/upload-url`, { key: readOnly, body: {} })).status).toBe(403);
    expect((await complete(rec.id, {}, readOnly)).status).toBe(403);
  });
});

describe("the PUT to the upload URL", () => {
  test("stores the bytes and answers with their size; no Authorization needed", async () => {
    const rec = await createRecording(t, acme.test);
    const bytes = fixture("tone-3s.wav");
    const r = await put(t, acme.test, rec.id, bytes);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ recording_id: rec.id, chunk_index: null, file_size_bytes: bytes.length });
  });

  test("the token is single-use: a second PUT is 401", async () => {
    const rec = await createRecording(t, acme.test);
    const u = await t.call("POST", `/v1/recordings/${rec.id}/upload-url`, { key: acme.test, body: {} });
    expect((await t.call("PUT", pathOf(u.body.upload_url), { rawBody: fixture("tone-3s.wav") })).status).toBe(200);
    const again = await t.call("PUT", pathOf(u.body.upload_url), { rawBody: fixture("tone-3s.wav") });
    expect(again.status).toBe(401);
    expect(again.body.error.code).toBe("unauthorized");
  });

  test("an expired token is 401, an unknown one 401, an API key in its place 401", async () => {
    const rec = await createRecording(t, acme.test);
    const u = await t.call("POST", `/v1/recordings/${rec.id}/upload-url`, { key: acme.test, body: {} });
    t.clock.advance(t.deps.config.uploads.tokenTtlSeconds * 1000);
    expect((await t.call("PUT", pathOf(u.body.upload_url), { rawBody: "x" })).status).toBe(401);
    expect((await t.call("PUT", "/v1/uploads/up_unknown", { rawBody: "x" })).status).toBe(401);
    expect((await t.call("PUT", `/v1/uploads/${acme.test}`, { rawBody: "x" })).status).toBe(401);
  });

  test("a body over the size limit is 413 and leaves the recording without staged bytes", async () => {
    const small = await makeTestApp({ env: { PARLEY_MAX_UPLOAD_BYTES: "1000" } });
    const tenant = makeTenant(small.deps, "small-limit");
    const rec = await createRecording(small, tenant.test);
    const u = await small.call("POST", `/v1/recordings/${rec.id}/upload-url`, { key: tenant.test, body: {} });
    // A stream has no Content-Length, so the limit is enforced while the bytes arrive.
    const body = new Blob([fixture("tone-3s.wav")]).stream();
    const r = await small.call("PUT", pathOf(u.body.upload_url), { rawBody: body });
    expect(r.status).toBe(413);
    expect(r.body.error.code).toBe("payload_too_large");
    expect((await small.call("POST", `/v1/recordings/${rec.id}/upload-complete`, { key: tenant.test, body: {} })).body.error.code).toBe(
      "encrypted_upload_v2_staging_missing",
    );
    // With a Content-Length the PUT is refused before it starts, and the URL stays usable.
    const u2 = await small.call("POST", `/v1/recordings/${rec.id}/upload-url`, { key: tenant.test, body: {} });
    expect((await small.call("PUT", pathOf(u2.body.upload_url), { rawBody: new Uint8Array(1001), headers: { "content-length": "1001" } })).status).toBe(413);
    expect((await small.call("PUT", pathOf(u2.body.upload_url), { rawBody: new Uint8Array(1000) })).status).toBe(200);
  });

  test("more concurrent PUTs than the per-project limit get 429 too_many_uploads; other projects are not affected", async () => {
    const limited = await makeTestApp({ env: { PARLEY_MAX_CONCURRENT_UPLOADS: "2" } });
    const a = makeTenant(limited.deps, "conc-a");
    const b = makeTenant(limited.deps, "conc-b");
    const url = async (tenant: Tenant) => {
      const rec = await createRecording(limited, tenant.test);
      return pathOf((await limited.call("POST", `/v1/recordings/${rec.id}/upload-url`, { key: tenant.test, body: {} })).body.upload_url);
    };
    // Two uploads whose bodies stay open hold both slots.
    const holds = [0, 1].map(() => {
      let finish!: () => void;
      // Asked for more than the first bytes: the server is streaming it, so it holds a slot.
      const reading = Promise.withResolvers<void>();
      const body = new ReadableStream<Uint8Array>({
        start(c) {
          c.enqueue(new Uint8Array(10));
          finish = () => c.close();
        },
        pull: () => reading.resolve(),
      });
      return { body, reading: reading.promise, finish: () => finish() };
    });
    const urls = [await url(a), await url(a), await url(a), await url(b)];
    const running = holds.map((h, i) => limited.call("PUT", urls[i]!, { rawBody: h.body }));
    await Promise.all(holds.map((h) => h.reading));
    const third = await limited.call("PUT", urls[2]!, { rawBody: "x" });
    expect(third.status).toBe(429);
    expect(third.body.error.code).toBe("too_many_uploads");
    expect(third.headers.get("retry-after")).toBe("1");
    expect((await limited.call("PUT", urls[3]!, { rawBody: "x" })).status).toBe(200);
    holds.forEach((h) => h.finish());
    expect((await Promise.all(running)).map((r) => r.status)).toEqual([200, 200]);
    // The 429 did not use up the token: once a slot is free the same URL works.
    expect((await limited.call("PUT", urls[2]!, { rawBody: "x" })).status).toBe(200);
  });
});

describe("upload-complete", () => {
  test("with sha256: 425 while verifying, then 200 uploaded with probe facts, event and auto-transcription job", async () => {
    const rec = await createRecording(t, acme.test, { recorded_at: "2026-01-15T10:00:00Z" });
    const bytes = fixture("tone-3s.mp3");
    await put(t, acme.test, rec.id, bytes);
    const body = { sha256: sha256(bytes), file_size_bytes: bytes.length, upload_attempt_id: "att-1", client_version: "app/1.2" };
    const pending = await complete(rec.id, body);
    expect(pending.status).toBe(425);
    expect(pending.body.error.code).toBe("upload_verification_pending");
    expect(pending.headers.get("retry-after")).toBe("1");
    expect((await complete(rec.id, body)).status).toBe(425);
    expect((await t.call("GET", `/v1/recordings/${rec.id}`, { key: acme.test })).body.status).toBe("pending");
    await t.deps.queue.drain();
    const done = await complete(rec.id, body);
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({
      id: rec.id,
      status: "uploaded",
      file_size_bytes: bytes.length,
      sha256: sha256(bytes),
      format: "mp3",
      codec: "mp3",
      duration_seconds: 3,
      error: null,
    });
    expect(done.body.uploaded_at).not.toBeNull();
    const event = eventsOf(t, "recording.uploaded").find((e) => e.id === rec.id);
    expect(Object.keys(event).sort()).toEqual([
      "device_id",
      "duration_seconds",
      "end_user_id",
      "ended_at",
      "file_size_bytes",
      "format",
      "id",
      "started_at",
      "status",
      "uploaded_at",
    ]);
    expect(event).toMatchObject({ status: "uploaded", format: "mp3", file_size_bytes: bytes.length, started_at: "2026-01-15T10:00:00.000Z" });
    // 3 s of tone; ffmpeg reads 3.1 from the mp3 header (encoder padding), the built-in decoder counts 3.0 (decision 091).
    expect(event.duration_seconds).toBeGreaterThan(2.9);
    expect(event.duration_seconds).toBeLessThan(3.2);
    expect(Date.parse(event.ended_at) - Date.parse(event.started_at)).toBe(Math.round(event.duration_seconds * 1000));
    await t.deps.queue.drain();
    expect(autos).toContainEqual({ project_id: acme.project.id, mode: "test", recording_id: rec.id });
  });

  test("an identical retry after success is 200; a conflicting one 409 resource_conflict", async () => {
    const { recording, bytes } = await uploadedRecording(t, acme.test);
    expect((await complete(recording.id, { sha256: sha256(bytes) })).status).toBe(200);
    expect((await complete(recording.id, {})).status).toBe(200);
    const conflict = await complete(recording.id, { sha256: "0".repeat(64) });
    expect(conflict.status).toBe(409);
    expect(conflict.body.error).toMatchObject({ code: "resource_conflict", param: "sha256" });
    expect((await complete(recording.id, { file_size_bytes: 1 })).body.error.param).toBe("file_size_bytes");
    expect(eventsOf(t, "recording.uploaded").filter((e) => e.id === recording.id)).toHaveLength(1);
  });

  test("a conflicting completion while verification runs is 409 too", async () => {
    const rec = await createRecording(t, acme.test);
    const bytes = fixture("tone-3s.wav");
    await put(t, acme.test, rec.id, bytes);
    expect((await complete(rec.id, { sha256: sha256(bytes), upload_attempt_id: "a" })).status).toBe(425);
    expect((await complete(rec.id, { sha256: sha256(bytes), upload_attempt_id: "b" })).status).toBe(409);
    await t.deps.queue.drain();
  });

  test("hash mismatch: 409 upload_integrity_failed, status integrity_failure; a fresh upload URL repairs it", async () => {
    const rec = await createRecording(t, acme.test);
    const bytes = fixture("tone-3s.wav");
    const corrupted = bytes.slice();
    corrupted[1000] = corrupted[1000]! ^ 0xff;
    await put(t, acme.test, rec.id, corrupted);
    const body = { sha256: sha256(bytes), file_size_bytes: bytes.length };
    expect((await complete(rec.id, body)).status).toBe(425);
    await t.deps.queue.drain();
    const failed = await complete(rec.id, body);
    expect(failed.status).toBe(409);
    expect(failed.body.error.code).toBe("upload_integrity_failed");
    const got = (await t.call("GET", `/v1/recordings/${rec.id}`, { key: acme.test })).body;
    expect(got).toMatchObject({ status: "integrity_failure", error: { code: "upload_integrity_failed" } });
    expect((await complete(rec.id, body)).status).toBe(409);
    expect(eventsOf(t, "recording.uploaded").some((e) => e.id === rec.id)).toBe(false);

    // Repair: a fresh URL resets the recording; the good bytes then verify.
    await put(t, acme.test, rec.id, bytes);
    expect((await t.call("GET", `/v1/recordings/${rec.id}`, { key: acme.test })).body).toMatchObject({ status: "pending", error: null });
    expect((await complete(rec.id, body)).status).toBe(425);
    await t.deps.queue.drain();
    const repaired = await complete(rec.id, body);
    expect(repaired.status).toBe(200);
    expect(repaired.body).toMatchObject({ status: "uploaded", sha256: sha256(bytes), error: null });
  });

  test("a size mismatch fails verification the same way", async () => {
    const rec = await createRecording(t, acme.test);
    const bytes = fixture("tone-3s.flac");
    await put(t, acme.test, rec.id, bytes);
    expect((await complete(rec.id, { sha256: sha256(bytes), file_size_bytes: bytes.length + 1 })).status).toBe(425);
    await t.deps.queue.drain();
    expect((await complete(rec.id, { sha256: sha256(bytes), file_size_bytes: bytes.length + 1 })).body.error.code).toBe("upload_integrity_failed");
  });

  test("without a hash the call verifies before answering 200", async () => {
    const rec = await createRecording(t, acme.test);
    const bytes = fixture("tone-3s.m4a");
    await put(t, acme.test, rec.id, bytes);
    const r = await complete(rec.id, { file_size_bytes: bytes.length });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ status: "uploaded", format: "m4a", codec: "aac", sha256: sha256(bytes) });
  });

  test("nothing uploaded: 409 encrypted_upload_v2_staging_missing", async () => {
    const rec = await createRecording(t, acme.test);
    const r = await complete(rec.id, { sha256: "a".repeat(64) });
    expect(r.status).toBe(409);
    expect(r.body.error.code).toBe("encrypted_upload_v2_staging_missing");
  });

  test("staged bytes that vanished from storage before verification: staging_missing after the job", async () => {
    const rec = await createRecording(t, acme.test);
    const bytes = fixture("tone-3s.wav");
    const put1 = await put(t, acme.test, rec.id, bytes);
    expect(put1.status).toBe(200);
    expect((await complete(rec.id, { sha256: sha256(bytes) })).status).toBe(425);
    const key = t.deps.db.query<{ storage_key: string }, [string]>("SELECT storage_key FROM recordings WHERE id = ?").get(rec.id)!.storage_key;
    await t.deps.storage.remove(key);
    await t.deps.queue.drain();
    expect((await complete(rec.id, { sha256: sha256(bytes) })).body.error.code).toBe("encrypted_upload_v2_staging_missing");
  });

  test("undecodable bytes are uploaded with error audio_format_unsupported for the pipeline to report", async () => {
    const rec = await createRecording(t, acme.test);
    const bytes = fixture("not-audio.txt");
    await put(t, acme.test, rec.id, bytes);
    const r = await complete(rec.id, {});
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ status: "uploaded", format: null, duration_seconds: null, error: { code: "audio_format_unsupported" } });
  });

  test("Idempotency-Key: the 425 is not replayed, the final 200 is; another payload under the key is idempotency_key_conflict", async () => {
    const rec = await createRecording(t, acme.test);
    const bytes = fixture("tone-3s.wav");
    await put(t, acme.test, rec.id, bytes);
    const headers = { "idempotency-key": `complete-${rec.id}` };
    const body = { sha256: sha256(bytes) };
    expect((await t.call("POST", `/v1/recordings/${rec.id}/upload-complete`, { key: acme.test, body, headers })).status).toBe(425);
    await t.deps.queue.drain();
    expect((await t.call("POST", `/v1/recordings/${rec.id}/upload-complete`, { key: acme.test, body, headers })).status).toBe(200);
    const replay = await t.call("POST", `/v1/recordings/${rec.id}/upload-complete`, { key: acme.test, body, headers });
    expect(replay.status).toBe(200);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    const other = await t.call("POST", `/v1/recordings/${rec.id}/upload-complete`, { key: acme.test, body: { file_size_bytes: 1 }, headers });
    expect(other.body.error.code).toBe("idempotency_key_conflict");
  });

  test("after upload, upload-url is 409 (the original is immutable)", async () => {
    const { recording } = await uploadedRecording(t, acme.test);
    expect((await t.call("POST", `/v1/recordings/${recording.id}/upload-url`, { key: acme.test, body: {} })).status).toBe(409);
  });
});

describe("streaming uploads", () => {
  test("numbered chunks are assembled in order and verified as a whole", async () => {
    const rec = await createRecording(t, acme.test);
    const bytes = fixture("tone-3s.wav");
    const parts = [bytes.slice(0, 30_000), bytes.slice(30_000, 60_000), bytes.slice(60_000)];
    // Out of order, and chunk 1 re-sent: the last copy of an index wins.
    for (const i of [2, 0, 1, 1]) expect((await put(t, acme.test, rec.id, parts[i]!, { chunk_index: i })).status).toBe(200);
    const mid = (await t.call("GET", `/v1/recordings/${rec.id}`, { key: acme.test })).body;
    expect(mid).toMatchObject({ status: "streaming", is_streaming: true, chunk_count: 3 });
    expect((await t.call("POST", `/v1/recordings/${rec.id}/upload-url`, { key: acme.test, body: {} })).body.error.param).toBe("chunk_index");
    expect((await complete(rec.id, { sha256: sha256(bytes), file_size_bytes: bytes.length })).status).toBe(425);
    await t.deps.queue.drain();
    const done = await complete(rec.id, { sha256: sha256(bytes), file_size_bytes: bytes.length });
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({ status: "uploaded", is_streaming: true, chunk_count: 3, format: "wav", duration_seconds: 3 });
    const audio = await t.app.handle(new Request(`http://localhost/v1/recordings/${rec.id}/audio`, { headers: { authorization: `Bearer ${acme.test}` } }));
    expect(sha256(new Uint8Array(await audio.arrayBuffer()))).toBe(sha256(bytes));
  });

  test("a chunk object lost from storage before assembly must be sent again", async () => {
    const rec = await createRecording(t, acme.test);
    const bytes = fixture("tone-3s.wav");
    const parts = [bytes.slice(0, 50_000), bytes.slice(50_000)];
    for (const i of [0, 1]) await put(t, acme.test, rec.id, parts[i]!, { chunk_index: i });
    const body = { sha256: sha256(bytes) };
    expect((await complete(rec.id, body)).status).toBe(425);
    const lost = t.deps.db
      .query<{ storage_key: string }, [string]>("SELECT storage_key FROM recording_chunks WHERE recording_id = ? AND chunk_index = 1")
      .get(rec.id)!;
    await t.deps.storage.remove(lost.storage_key);
    await t.deps.queue.drain();
    const r = await complete(rec.id, body);
    expect(r.status).toBe(409);
    expect(r.body.error.message).toContain("Chunk 1");
    await put(t, acme.test, rec.id, parts[1]!, { chunk_index: 1 });
    expect((await complete(rec.id, body)).status).toBe(425);
    await t.deps.queue.drain();
    expect((await complete(rec.id, body)).body).toMatchObject({ status: "uploaded", chunk_count: 2, sha256: sha256(bytes) });
  });

  test("a whole-file URL issued before streaming began cannot land on a streaming recording", async () => {
    const rec = await createRecording(t, acme.test);
    const whole = await t.call("POST", `/v1/recordings/${rec.id}/upload-url`, { key: acme.test, body: {} });
    expect((await put(t, acme.test, rec.id, new Uint8Array(10), { chunk_index: 0 })).status).toBe(200);
    const late = await t.call("PUT", pathOf(whole.body.upload_url), { rawBody: new Uint8Array(20) });
    expect(late.status).toBe(409);
    expect((await t.call("GET", `/v1/recordings/${rec.id}`, { key: acme.test })).body).toMatchObject({ is_streaming: true, chunk_count: 1 });
  });

  test("a gap in the chunk numbers is 409 at completion", async () => {
    const rec = await createRecording(t, acme.test);
    await put(t, acme.test, rec.id, new Uint8Array(10), { chunk_index: 0 });
    await put(t, acme.test, rec.id, new Uint8Array(10), { chunk_index: 2 });
    const r = await complete(rec.id, {});
    expect(r.status).toBe(409);
    expect(r.body.error.message).toContain("Chunk 1");
  });
});

test("the periodic sweep removes what a crash between a PUT's write and its row update left behind", async () => {
  const rec = await createRecording(t, acme.test);
  const good = await put(t, acme.test, rec.id, fixture("tone-3s.wav"));
  expect(good.status).toBe(200);
  await t.call("POST", `/v1/recordings/${rec.id}/upload-url`, { key: acme.test, body: {} });
  const rows = t.deps.db.query<any, [string]>("SELECT * FROM recording_uploads WHERE recording_id = ? ORDER BY created_at, credential_id").all(rec.id);
  const [received, orphan] = [rows.find((r) => r.received_at), rows.find((r) => !r.received_at)];
  // The crash: the object landed under the URL's key, the row never heard of it.
  const orphanKey = received.storage_key.replace(received.credential_id, orphan.credential_id);
  await t.deps.storage.write(
    orphanKey,
    (async function* () {
      yield new Uint8Array(10);
    })(),
  );
  await t.runTask("sweep-partial-uploads");
  expect(await t.deps.storage.size(orphanKey)).toBe(10);
  t.clock.advance((t.deps.config.uploads.tokenTtlSeconds + 86_400) * 1000 + 1);
  await t.runTask("sweep-partial-uploads");
  expect(await t.deps.storage.size(orphanKey)).toBeNull();
  expect(await t.deps.storage.size(received.storage_key)).toBe(fixture("tone-3s.wav").length);
  expect(t.deps.db.query("SELECT 1 FROM recording_uploads WHERE credential_id = ?").get(orphan.credential_id)).toBeNull();
});

describe("uploads: security", () => {
  test("a device token uploads to its own device's recordings only", async () => {
    const eu = (await t.call("POST", "/v1/end-users", { key: acme.test, body: {} })).body;
    const mine = deviceToken(t, acme, "dev_mine", eu.id);
    const theirs = deviceToken(t, acme, "dev_theirs", eu.id);
    const { recording } = await uploadedRecording(t, mine);
    expect(recording).toMatchObject({ device_id: "dev_mine", end_user_id: eu.id, source: "device", status: "uploaded" });
    const rec = await createRecording(t, mine);
    expect((await t.call("POST", `/v1/recordings/${rec.id}/upload-url`, { key: theirs, body: {} })).status).toBe(404);
    expect((await complete(rec.id, {}, theirs)).status).toBe(404);
  });

  test("another project and the other mode cannot issue URLs for or complete the recording", async () => {
    const rec = await createRecording(t, acme.test);
    for (const key of [other.test, acme.live]) {
      expect((await t.call("POST", `/v1/recordings/${rec.id}/upload-url`, { key, body: {} })).status).toBe(404);
      expect((await complete(rec.id, {}, key)).status).toBe(404);
    }
  });

  test("an end-user-scoped key reaches only its end user's recordings", async () => {
    const a = (await t.call("POST", "/v1/end-users", { key: acme.test, body: {} })).body;
    const b = (await t.call("POST", "/v1/end-users", { key: acme.test, body: {} })).body;
    const rec = await createRecording(t, acme.test, { end_user_id: b.id });
    const scoped = acme.key("test", { endUserId: a.id });
    expect((await t.call("POST", `/v1/recordings/${rec.id}/upload-url`, { key: scoped, body: {} })).status).toBe(404);
  });
});
