// What a PUT to an upload URL may carry: any Content-Type the client sends (streamed, never
// buffered), no empty body, the declared size exactly, and streaming chunks within the limit together.
import { beforeAll, describe, expect, test } from "bun:test";
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { CHUNK, HEADER_BYTES, SEALED_CHUNK } from "../../src/storage/encryption/sealed-format";
import { createApp } from "../../src/app";
import { buildDeps } from "../../src/boot";
import { createLogger } from "../../src/log";
import { makeTenant, makeTestApp, waitFor } from "../helpers";
import { captureAutoTranscriptions, createRecording, pathOf, put, sha256, type T, type Tenant } from "./recordings-support";

const LIMIT = 1000;
let t: T;
let acme: Tenant;

beforeAll(async () => {
  t = await makeTestApp({ env: { PARLEY_MAX_UPLOAD_BYTES: String(LIMIT) } });
  acme = makeTenant(t.deps, "limits");
  captureAutoTranscriptions(t);
});

async function uploadUrl(id: string, body: Record<string, unknown> = {}) {
  const r = await t.call("POST", `/v1/recordings/${id}/upload-url`, { key: acme.test, body });
  if (r.status !== 200) throw new Error(`upload-url failed: ${r.status} ${JSON.stringify(r.body)}`);
  return { path: pathOf(r.body.upload_url), headers: r.body.headers as Record<string, string> };
}
/** A body without a Content-Length (chunked), so only the streamed count can enforce a limit. */
const streamOf = (bytes: Uint8Array<ArrayBuffer>) => new Blob([bytes]).stream();
const withLength = (n: number) => ({ rawBody: new Uint8Array(n).fill(1), headers: { "content-length": String(n) } });
const complete = (id: string, body: Record<string, unknown> = {}) => t.call("POST", `/v1/recordings/${id}/upload-complete`, { key: acme.test, body });

/** A body that sends `head` and then waits, until released. */
/** A body that sends `head` and then stays open until released; `reading` settles once the server has taken `head` and asks for more. */
function held(head: Uint8Array) {
  let close!: () => void;
  const reading = Promise.withResolvers<void>();
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      c.enqueue(head);
      close = () => c.close();
    },
    pull: () => reading.resolve(),
  });
  return { body, reading: reading.promise, release: () => close() };
}

describe("the Content-Type of the PUT", () => {
  test.each(["application/octet-stream", "text/plain", "application/x-www-form-urlencoded"])(
    "%s, as upload-url's headers say or a client sends, is streamed to storage, not read into memory first",
    async (type) => {
      const big = await makeTestApp();
      const tenant = makeTenant(big.deps, `ct-${type.replace(/\W/g, "-")}`);
      const rec = await createRecording(big, tenant.test);
      const u = await big.call("POST", `/v1/recordings/${rec.id}/upload-url`, {
        key: tenant.test,
        body: type === "application/octet-stream" ? {} : { content_type: type },
      });
      // Exactly the headers the response names: with no content_type, application/octet-stream.
      expect(u.body.headers).toEqual({ "Content-Type": type });
      const head = new Uint8Array(300 * 1024).fill(7);
      const { body, release } = held(head);
      const reply = big.call("PUT", pathOf(u.body.upload_url), { rawBody: body, headers: u.body.headers });
      // Bytes reach the storage's temp file while the body is still open: nothing waited for the whole body.
      const tmp = join(big.deps.config.dataDir, "audio", ".tmp");
      const written = () => readdirSync(tmp).reduce((n, f) => n + statSync(join(tmp, f)).size, 0);
      // Sealed at rest (decision 105): the header and every 64 KiB chunk that more bytes follow.
      const sealedHead = HEADER_BYTES + Math.floor((head.length - 1) / CHUNK) * SEALED_CHUNK;
      await waitFor("the sealed head in the temp file", () => written() >= sealedHead);
      expect(written()).toBe(sealedHead);
      release();
      const r = await reply;
      expect(r.status).toBe(200);
      expect(r.body).toEqual({ recording_id: rec.id, chunk_index: null, file_size_bytes: head.length });
    },
  );

  test("an invalid token with application/octet-stream is 401 without the body being read", async () => {
    // A body that never ends: reading it whole would hang this request.
    const endless = new ReadableStream<Uint8Array>({ pull: (c) => c.enqueue(new Uint8Array(1024)) });
    const r = await Promise.race([
      t.call("PUT", "/v1/uploads/up_not_a_token", { rawBody: endless, headers: { "content-type": "application/octet-stream" } }),
      Bun.sleep(2000).then(() => ({ status: 0, body: "the server read the body" })),
    ]);
    expect(r.status).toBe(401);
    expect(r.body.error.code).toBe("unauthorized");
  });
});

describe("empty and mis-sized bodies", () => {
  test("an empty body is 400 invalid_request and leaves the URL usable, with or without a Content-Length", async () => {
    const rec = await createRecording(t, acme.test);
    const u = await uploadUrl(rec.id);
    for (const rawBody of [new Uint8Array(0), new ReadableStream<Uint8Array>({ start: (c) => c.close() })]) {
      const r = await t.call("PUT", u.path, { rawBody, headers: u.headers });
      expect(r.status).toBe(400);
      expect(r.body.error.code).toBe("invalid_request");
    }
    expect((await complete(rec.id)).body.error.code).toBe("encrypted_upload_v2_staging_missing");
    expect((await t.call("PUT", u.path, { rawBody: new Uint8Array(10), headers: u.headers })).status).toBe(200);
  });

  test("upload-url refuses file_size_bytes 0 (422): no body could match it", async () => {
    const rec = await createRecording(t, acme.test);
    const r = await t.call("POST", `/v1/recordings/${rec.id}/upload-url`, { key: acme.test, body: { file_size_bytes: 0 } });
    expect(r.status).toBe(422);
    expect(r.body.error.param).toBe("file_size_bytes");
  });

  test("a body larger than the declared file_size_bytes is 413, from its Content-Length or as it streams; the URL stays usable", async () => {
    const rec = await createRecording(t, acme.test);
    const u = await uploadUrl(rec.id, { file_size_bytes: 100 });
    const early = await t.call("PUT", u.path, withLength(101));
    expect(early.status).toBe(413);
    expect(early.body.error).toMatchObject({ code: "payload_too_large" });
    expect(early.body.error.message).toContain("100 bytes");
    const streamed = await t.call("PUT", u.path, { rawBody: streamOf(new Uint8Array(101)) });
    expect(streamed.status).toBe(413);
    expect((await complete(rec.id)).body.error.code).toBe("encrypted_upload_v2_staging_missing");
    // A refused PUT leaves the URL usable: only stored bytes spend it.
    expect((await t.call("PUT", u.path, withLength(100))).status).toBe(200);
  });

  test("a body shorter than the declared file_size_bytes is 400 invalid_request and nothing is staged", async () => {
    const rec = await createRecording(t, acme.test);
    const u = await uploadUrl(rec.id, { file_size_bytes: 100 });
    expect((await t.call("PUT", u.path, withLength(99))).status).toBe(400);
    const streamed = await t.call("PUT", u.path, { rawBody: streamOf(new Uint8Array(99)) });
    expect(streamed.status).toBe(400);
    expect(streamed.body.error.code).toBe("invalid_request");
    expect((await complete(rec.id)).body.error.code).toBe("encrypted_upload_v2_staging_missing");
    // The short chunked body did not spend the URL: the whole file goes through it.
    expect((await t.call("PUT", u.path, { rawBody: streamOf(new Uint8Array(100)) })).body).toMatchObject({ file_size_bytes: 100 });
    expect((await t.call("PUT", u.path, { rawBody: streamOf(new Uint8Array(100)) })).status).toBe(401);
  });
});

describe("streaming chunks share one size limit", () => {
  test("a chunk that takes the sum over the limit is 413; a re-sent index counts once", async () => {
    const rec = await createRecording(t, acme.test);
    expect((await put(t, acme.test, rec.id, new Uint8Array(600), { chunk_index: 0 })).status).toBe(200);
    const u = await uploadUrl(rec.id, { chunk_index: 1 });
    const early = await t.call("PUT", u.path, withLength(401));
    expect(early.status).toBe(413);
    expect(early.body.error.message).toContain("600");
    expect((await t.call("PUT", u.path, { rawBody: streamOf(new Uint8Array(401)) })).status).toBe(413);
    expect((await t.call("GET", `/v1/recordings/${rec.id}`, { key: acme.test })).body.chunk_count).toBe(1);
    expect((await put(t, acme.test, rec.id, new Uint8Array(400), { chunk_index: 1 })).status).toBe(200);
    // Replacing chunk 0 with as many bytes again fits: its old copy no longer counts.
    expect((await put(t, acme.test, rec.id, new Uint8Array(600).fill(2), { chunk_index: 0 })).status).toBe(200);
    const declared = await t.call("POST", `/v1/recordings/${rec.id}/upload-url`, { key: acme.test, body: { chunk_index: 2, file_size_bytes: 1 } });
    expect(declared.status).toBe(413);
    expect(declared.body.error.param).toBe("file_size_bytes");
  });

  test("two chunk PUTs streaming at once cannot both land past the limit", async () => {
    const rec = await createRecording(t, acme.test);
    const urls = [await uploadUrl(rec.id, { chunk_index: 0 }), await uploadUrl(rec.id, { chunk_index: 1 })];
    const bodies = [held(new Uint8Array(600)), held(new Uint8Array(600))];
    const replies = urls.map((u, i) => t.call("PUT", u.path, { rawBody: bodies[i]!.body }));
    await Promise.all(bodies.map((b) => b.reading)); // both streaming at once
    bodies.forEach((b) => b.release());
    expect((await Promise.all(replies)).map((r) => r.status).sort()).toEqual([200, 413]);
  });

  test("completion checks the sum too (here: the limit was lowered after the chunks landed)", async () => {
    const rec = await createRecording(t, acme.test);
    const bytes = new Uint8Array(900).fill(3);
    for (const i of [0, 1]) await put(t, acme.test, rec.id, bytes.slice(i * 450, (i + 1) * 450), { chunk_index: i });
    const lowered = buildDeps(
      { ...t.deps.config, uploads: { ...t.deps.config.uploads, maxBytes: 800 } },
      { clock: t.clock, log: createLogger("silent"), engines: t.deps.engines },
    );
    const res = await createApp(lowered).handle(
      new Request(`http://localhost/v1/recordings/${rec.id}/upload-complete`, {
        method: "POST",
        headers: { authorization: `Bearer ${acme.test}`, "content-type": "application/json" },
        body: "{}",
      }),
    );
    lowered.db.close();
    expect(res.status).toBe(413);
    expect(((await res.json()) as any).error.code).toBe("payload_too_large");
    // Under the limit it was uploaded with, the same chunks complete.
    expect((await complete(rec.id, { sha256: sha256(bytes) })).status).toBe(425);
  });
});

describe("on a volume below PARLEY_MIN_FREE_MB", () => {
  test("upload-url answers what is wrong with the request first (404, 413); a right one is 507, to try again later", async () => {
    // A floor no real disk reaches: every volume is below it.
    const full = await makeTestApp({ env: { PARLEY_MAX_UPLOAD_BYTES: String(LIMIT), PARLEY_MIN_FREE_MB: String(2 ** 40) } });
    const tenant = makeTenant(full.deps, "floor");
    const rec = await createRecording(full, tenant.test);
    const ask = (id: string, body: Record<string, unknown>) => full.call("POST", `/v1/recordings/${id}/upload-url`, { key: tenant.test, body });
    expect((await ask("rec_missing", { file_size_bytes: 10 })).status).toBe(404);
    const tooLarge = await ask(rec.id, { file_size_bytes: LIMIT + 1 });
    expect(tooLarge.status).toBe(413);
    expect(tooLarge.body.error.code).toBe("payload_too_large");
    const later = await ask(rec.id, { file_size_bytes: 10 });
    expect(later.status).toBe(507);
    expect(later.body.error.code).toBe("insufficient_storage");
  });
});
