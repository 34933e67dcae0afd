import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { addFirmware } from "../../src/modules/firmware/releases";
import { makeTempDir, makeTenant, makeTestApp } from "../helpers";
import { boundDevice } from "../modules/device-runtime-fixtures";
import { createRecording, fixture, pathOf, sha256, type T } from "../modules/recordings-support";

// Issue 29: bytes a client stored must never come back as a page on the dashboard's origin
// (decision 113), and no API response may be sniffed as one.

const PAGE = new TextEncoder().encode("<!doctype html><script>fetch('/dashboard/api/keys')</script><p>hello</p>\n".repeat(20));
const SAFE_DOWNLOAD = { "x-content-type-options": "nosniff", "content-security-policy": "sandbox" };

/** Creates, PUTs and completes `bytes` with `body` as the recording's fields; returns the recording's id once verification has run. */
async function stored(t: T, key: string, bytes: Uint8Array<ArrayBuffer>, body: Record<string, unknown> = {}, contentType = "audio/wav") {
  const rec = await createRecording(t, key, body);
  const u = await t.call("POST", `/v1/recordings/${rec.id}/upload-url`, { key, body: { content_type: contentType } });
  expect((await t.call("PUT", pathOf(u.body.upload_url), { rawBody: bytes, headers: u.body.headers })).status).toBe(200);
  const completion = { sha256: sha256(bytes), file_size_bytes: bytes.length };
  await t.call("POST", `/v1/recordings/${rec.id}/upload-complete`, { key, body: completion });
  await t.deps.queue.drain();
  expect((await t.call("POST", `/v1/recordings/${rec.id}/upload-complete`, { key, body: completion })).status).toBe(200);
  return rec.id as string;
}

const headersOf = (res: { headers: Headers }, names: string[]) => Object.fromEntries(names.map((n) => [n, res.headers.get(n)]));

describe("a recording's mime_type", () => {
  test("must be an audio or video type of a format Parley decodes, with at most a codecs parameter", async () => {
    const t = await makeTestApp();
    const { test: key } = makeTenant(t.deps);
    for (const bad of [
      "text/html",
      "image/svg+xml",
      "application/octet-stream",
      "audio/wav\r\nSet-Cookie: a=b",
      "audio/wav\n",
      "audio/ogg; charset=utf-8",
      "audio/x-unknown",
      "audio/wav; codecs=1; x=2",
    ]) {
      const r = await t.call("POST", "/v1/recordings", { key, body: { mime_type: bad } });
      expect([bad, r.status, r.body.error?.code, r.body.error?.param]).toEqual([bad, 422, "validation_error", "mime_type"]);
    }
    for (const good of ["audio/wav", "AUDIO/OGG", "audio/webm;codecs=opus", 'audio/ogg; codecs="opus"', "video/mp4", "audio/x-m4a", "audio/mpeg"]) {
      const r = await t.call("POST", "/v1/recordings", { key, body: { mime_type: good } });
      expect([good, r.status, r.body.mime_type]).toEqual([good, 201, good]);
    }
  });

  test("an upload URL's content_type becomes the mime_type only when it is such a type; a header value never carries CR/LF", async () => {
    const t = await makeTestApp();
    const { test: key } = makeTenant(t.deps);
    const html = await stored(t, key, PAGE, {}, "text/html");
    expect((await t.call("GET", `/v1/recordings/${html}`, { key })).body.mime_type).toBeNull();
    const wav = await stored(t, key, fixture("tone-3s.wav"), {}, "audio/x-wav");
    expect((await t.call("GET", `/v1/recordings/${wav}`, { key })).body.mime_type).toBe("audio/x-wav");
    const rec = await createRecording(t, key);
    const crlf = await t.call("POST", `/v1/recordings/${rec.id}/upload-url`, { key, body: { content_type: "audio/wav\r\nX-Evil: 1" } });
    expect([crlf.status, crlf.body.error.param]).toEqual([422, "content_type"]);
  });
});

describe("downloads of stored bytes", () => {
  test("audio goes with the type the decoder identified, else application/octet-stream, as an attachment that is never sniffed or scripted", async () => {
    const t = await makeTestApp();
    const { test: key } = makeTenant(t.deps);
    const wav = await stored(t, key, fixture("tone-3s.wav"));
    const page = await stored(t, key, PAGE);
    // A row stored before mime_type was checked (or by hand): its type must not matter either.
    t.deps.db.query("UPDATE recordings SET mime_type = 'text/html' WHERE id IN (?, ?)").run(wav, page);
    const names = ["content-type", "content-disposition", "x-content-type-options", "content-security-policy"];

    const audio = await t.app.handle(new Request(`http://localhost/v1/recordings/${wav}/audio`, { headers: { authorization: `Bearer ${key}` } }));
    expect(audio.status).toBe(200);
    expect(headersOf(audio, names)).toEqual({
      "content-type": "audio/wav",
      "content-disposition": `attachment; filename="${wav}.wav"; filename*=UTF-8''${wav}.wav`,
      ...SAFE_DOWNLOAD,
    });

    const html = await t.app.handle(new Request(`http://localhost/v1/recordings/${page}/audio`, { headers: { authorization: `Bearer ${key}` } }));
    expect(html.status).toBe(200);
    expect((await t.call("GET", `/v1/recordings/${page}`, { key })).body.format).toBeNull();
    expect(headersOf(html, names)).toEqual({
      "content-type": "application/octet-stream",
      "content-disposition": `attachment; filename="${page}"; filename*=UTF-8''${page}`,
      ...SAFE_DOWNLOAD,
    });
    expect(new Uint8Array(await html.arrayBuffer())).toEqual(PAGE);

    // A range of it too.
    const part = await t.app.handle(
      new Request(`http://localhost/v1/recordings/${page}/audio`, { headers: { authorization: `Bearer ${key}`, range: "bytes=0-9" } }),
    );
    expect(part.status).toBe(206);
    expect(headersOf(part, names)).toMatchObject({ "content-type": "application/octet-stream", ...SAFE_DOWNLOAD });
  });

  test("export archives and firmware images are attachments that are never sniffed or scripted", async () => {
    const t = await makeTestApp();
    const acme = makeTenant(t.deps);
    const key = acme.test;
    const endUser = (await t.call("POST", "/v1/end-users", { key, body: { name: "Client" } })).body.id;
    const created = await t.call("POST", "/v1/exports", { key, body: { matter: "m", end_user_id: endUser } });
    expect(created.status).toBe(202);
    await t.deps.queue.drain();
    const zip = await t.app.handle(new Request(`http://localhost/v1/exports/${created.body.id}/download`, { headers: { authorization: `Bearer ${key}` } }));
    expect(zip.status).toBe(200);
    expect(headersOf(zip, ["content-type", "content-disposition", ...Object.keys(SAFE_DOWNLOAD)])).toEqual({
      "content-type": "application/zip",
      "content-disposition": `attachment; filename="${created.body.id}.zip"; filename*=UTF-8''${created.body.id}.zip`,
      ...SAFE_DOWNLOAD,
    });

    const file = join(makeTempDir(), "page.bin");
    writeFileSync(file, PAGE);
    const fw = addFirmware(
      t.deps.db,
      t.deps.config.dataDir,
      { organizationId: acme.project.organization_id, version: "9.9.9", model: "parley_pin", file, notes: "", publish: true },
      t.clock.now(),
    );
    const d = await boundDevice(t, key);
    const ota = (await t.call("POST", `/v1/devices/${d.id}/ota`, { key, body: { firmware_release_id: fw.id } })).body;
    await d.heartbeat({ channel: "wifi" });
    const image = await t.call("GET", `/v1/devices/${d.id}/ota/${ota.id}/firmware`, { key: d.token });
    expect(image.status).toBe(200);
    expect(headersOf(image, ["content-type", "content-disposition", ...Object.keys(SAFE_DOWNLOAD)])).toEqual({
      "content-type": "application/octet-stream",
      "content-disposition": `attachment; filename="firmware-9.9.9.bin"; filename*=UTF-8''firmware-9.9.9.bin`,
      ...SAFE_DOWNLOAD,
    });
  });
});

describe("every response is nosniff", () => {
  test("JSON, errors, unknown routes, the dashboard's API and its files", async () => {
    const t = await makeTestApp();
    const { test: key } = makeTenant(t.deps);
    const replies = [
      await t.call("GET", "/v1/end-users", { key }),
      await t.call("GET", "/v1/end-users"),
      await t.call("GET", "/v1/no-such-thing"),
      await t.call("POST", "/v1/end-users", { key, rawBody: "{oops", headers: { "content-type": "application/json" } }),
      await t.call("GET", "/dashboard/api/session"),
      await t.call("GET", "/dashboard/api/setup"),
      await t.call("GET", "/dashboard/app.js"),
      await t.call("GET", "/healthz"),
    ];
    expect(replies.map((r) => [r.status, r.headers.get("x-content-type-options")])).toEqual(
      [200, 401, 404, 400, 401, 200, 200, 200].map((status) => [status, "nosniff"]),
    );
  });
});

describe("the JSON body parser", () => {
  test("takes application/json and +json types only", async () => {
    const t = await makeTestApp();
    const { test: key } = makeTenant(t.deps);
    const post = (type: string) => t.call("POST", "/v1/end-users", { key, rawBody: JSON.stringify({ name: "Ada" }), headers: { "content-type": type } });
    for (const type of ["application/jsonx", "application/json-seq", "application/jsonp", "text/json", "application/x+jsonx", "text/plain"]) {
      const r = await post(type);
      expect([type, r.status, r.body.error?.code]).toEqual([type, 400, "invalid_request"]);
    }
    for (const type of [
      "application/json",
      "application/json; charset=utf-8",
      "Application/JSON",
      "application/merge-patch+json",
      "application/vnd.api+json; charset=utf-8",
    ]) {
      expect([type, (await post(type)).status]).toEqual([type, 201]);
    }
  });
});

describe("the dashboard's files", () => {
  test("a path that names an object's property, not a file, is 404", async () => {
    const t = await makeTestApp();
    for (const path of ["constructor", "__proto__", "toString", "hasOwnProperty", "valueOf", "__defineGetter__"]) {
      const r = await t.call("GET", `/dashboard/${path}`);
      expect([path, r.status, r.body.error?.code]).toEqual([path, 404, "not_found"]);
    }
    expect((await t.call("GET", "/dashboard/app.js")).status).toBe(200);
  });
});
