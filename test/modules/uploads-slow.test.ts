import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { makeTenant, makeTestApp, waitFor } from "../helpers";
import { boundDevice } from "./device-runtime-fixtures";
import { createRecording, fixture, pathOf, type T } from "./recordings-support";

// Issue 29, item 4 (decision 115): a trickling PUT must not hold an upload slot until the idle
// timeout, and one device must not hold all of a project's slots. The rate window is shrunk
// to a fraction of a second here; the server's default is 1 KiB/s over 30 s.

const SLOW = { PARLEY_UPLOAD_MIN_BYTES_PER_SECOND: "1024", PARLEY_UPLOAD_RATE_WINDOW_SECONDS: "0.3" };

/** A body that sends `head` and then nothing until release(). */
function trickle(head: Uint8Array) {
  let close!: () => void;
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      c.enqueue(head);
      close = () => {
        try {
          c.close();
        } catch {} // already cancelled by the server
      };
    },
  });
  return { body, release: () => close() };
}

async function uploadUrl(t: T, key: string, body: Record<string, unknown> = {}) {
  const rec = await createRecording(t, key, body);
  const u = await t.call("POST", `/v1/recordings/${rec.id}/upload-url`, { key, body: { content_type: "audio/wav" } });
  return { id: rec.id as string, path: pathOf(u.body.upload_url) };
}

describe("a minimum body rate on upload PUTs", () => {
  test("a PUT that brings too few bytes in a window is dropped with 408; its slot is free and its URL still usable", async () => {
    const t = await makeTestApp({ env: { ...SLOW, PARLEY_MAX_CONCURRENT_UPLOADS: "1" } });
    const { test: key } = makeTenant(t.deps);
    const slow = await uploadUrl(t, key);
    const { body, release } = trickle(new Uint8Array([1]));
    const reply = await t.call("PUT", slow.path, { rawBody: body, headers: { "content-type": "audio/wav" } });
    release();
    expect(reply.status).toBe(408);
    expect(reply.body.error.code).toBe("request_timeout");
    expect(reply.body.error.message).toContain("1024 bytes per second");
    // The one slot is free again, and the URL takes the whole file.
    const wav = fixture("tone-3s.wav");
    const again = await t.call("PUT", slow.path, { rawBody: wav, headers: { "content-type": "audio/wav" } });
    expect([again.status, again.body.file_size_bytes]).toEqual([200, wav.length]);
  });

  test("over a real connection, a client trickling its body gets the 408 and the connection is closed", async () => {
    const t = await makeTestApp({ env: SLOW });
    const { test: key } = makeTenant(t.deps);
    const { path } = await uploadUrl(t, key);
    const server = t.app.listen({ port: 0, hostname: "127.0.0.1" });
    try {
      const socket = connect(server.server!.port!, "127.0.0.1");
      let received = "";
      socket.on("data", (d) => (received += d.toString("latin1")));
      const closed = new Promise<void>((done) => socket.on("close", () => done()));
      socket.on("error", () => {});
      socket.write(`PUT ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: audio/wav\r\nContent-Length: 100000\r\n\r\nRIFF`);
      await closed;
      expect(received).toStartWith("HTTP/1.1 408");
      expect(received).toContain("request_timeout");
    } finally {
      server.stop(true);
    }
  });
});

describe("upload slots per device", () => {
  test("one device's recordings take at most PARLEY_MAX_CONCURRENT_UPLOADS_PER_DEVICE slots; others keep theirs", async () => {
    const t = await makeTestApp({ env: { PARLEY_MAX_CONCURRENT_UPLOADS: "4", PARLEY_MAX_CONCURRENT_UPLOADS_PER_DEVICE: "2" } });
    const tenant = makeTenant(t.deps);
    const device = await boundDevice(t, tenant.test);
    const other = await boundDevice(t, tenant.test);
    const held: { release: () => void; reply: Promise<{ status: number }> }[] = [];
    const hold = async (key: string) => {
      const { path } = await uploadUrl(t, key);
      const { body, release } = trickle(fixture("tone-3s.wav"));
      const reply = t.call("PUT", path, { rawBody: body, headers: { "content-type": "audio/wav" } });
      held.push({ release, reply });
    };
    await hold(device.token);
    await hold(device.token);
    // Both hold their slots once their bytes reach storage's temp files.
    const tmp = join(t.deps.config.dataDir, "audio", ".tmp");
    await waitFor("both PUTs to be streaming", () => existsSync(tmp) && readdirSync(tmp).length === 2);
    const third = await uploadUrl(t, device.token);
    const refused = await t.call("PUT", third.path, { rawBody: fixture("tone-3s.wav"), headers: { "content-type": "audio/wav" } });
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatchObject({ code: "too_many_uploads", message: expect.stringContaining("per device") });
    // Another device and a secret key still upload.
    for (const key of [other.token, tenant.test]) {
      const { path } = await uploadUrl(t, key);
      expect((await t.call("PUT", path, { rawBody: fixture("tone-3s.wav"), headers: { "content-type": "audio/wav" } })).status).toBe(200);
    }
    for (const h of held) h.release();
    expect((await Promise.all(held.map((h) => h.reply))).map((r) => r.status)).toEqual([200, 200]);
    expect((await t.call("PUT", third.path, { rawBody: fixture("tone-3s.wav"), headers: { "content-type": "audio/wav" } })).status).toBe(200);
  });
});
