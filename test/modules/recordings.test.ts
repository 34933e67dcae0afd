import { beforeAll, describe, expect, test } from "bun:test";
import { makeTenant, makeTestApp } from "../helpers";
import {
  captureAutoTranscriptions,
  createRecording,
  deviceToken,
  eventsOf,
  fixture,
  sha256,
  type T,
  type Tenant,
  uploadedRecording,
} from "./recordings-support";

let t: T;
let acme: Tenant;
let other: Tenant;

beforeAll(async () => {
  t = await makeTestApp();
  acme = makeTenant(t.deps, "rec-acme");
  other = makeTenant(t.deps, "rec-other");
  captureAutoTranscriptions(t);
});

const FIELDS = [
  "chunk_count",
  "codec",
  "consent_obtained",
  "created_at",
  "device_id",
  "duration_seconds",
  "end_user_id",
  "error",
  "file_size_bytes",
  "format",
  "id",
  "is_streaming",
  "metadata",
  "mime_type",
  "name",
  "recorded_at",
  "sha256",
  "source",
  "status",
  "updated_at",
  "upload_method",
  "uploaded_at",
];

async function endUser(key = acme.test) {
  return (await t.call("POST", "/v1/end-users", { key, body: {} })).body;
}

describe("recordings: create, get, list", () => {
  test("create is 201 pending with every field, and records recording.created with status created", async () => {
    const eu = await endUser();
    const r = await t.call("POST", "/v1/recordings", {
      key: acme.test,
      body: {
        end_user_id: eu.id,
        name: "Standup",
        recorded_at: "2026-01-15T09:00:00+01:00",
        metadata: { room: "A" },
        consent_obtained: true,
        mime_type: "audio/wav",
      },
    });
    expect(r.status).toBe(201);
    expect(Object.keys(r.body).sort()).toEqual(FIELDS);
    expect(r.body).toMatchObject({
      end_user_id: eu.id,
      device_id: null,
      name: "Standup",
      status: "pending",
      recorded_at: "2026-01-15T08:00:00.000Z",
      metadata: { room: "A" },
      source: "api_upload",
      is_streaming: false,
      chunk_count: 0,
      duration_seconds: null,
      file_size_bytes: null,
      upload_method: null,
      error: null,
    });
    expect(r.body.id).toMatch(/^rec_/);
    const event = eventsOf(t, "recording.created").find((e) => e.id === r.body.id);
    expect(event).toEqual({
      id: r.body.id,
      end_user_id: eu.id,
      device_id: null,
      status: "created",
      consent_obtained: true,
      metadata: { room: "A" },
      created_at: r.body.created_at,
    });
    expect((await t.call("GET", `/v1/recordings/${r.body.id}`, { key: acme.test })).body).toEqual(r.body);
  });

  test("Idempotency-Key replays the creation without a second recording", async () => {
    const headers = { "idempotency-key": "rec-create-1" };
    const a = await t.call("POST", "/v1/recordings", { key: acme.test, body: { name: "once" }, headers });
    const b = await t.call("POST", "/v1/recordings", { key: acme.test, body: { name: "once" }, headers });
    expect(b.status).toBe(201);
    expect(b.body.id).toBe(a.body.id);
    expect(eventsOf(t, "recording.created").filter((e) => e.id === a.body.id)).toHaveLength(1);
  });

  test("a device token fixes device_id and end_user_id, ignoring the body", async () => {
    const eu = await endUser();
    const token = deviceToken(t, acme, "dev_abc", eu.id);
    const r = await t.call("POST", "/v1/recordings", { key: token, body: { end_user_id: "eu_other", device_id: "dev_other" } });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ device_id: "dev_abc", end_user_id: eu.id, source: "device" });
  });

  test("with a real bound device: its dtok_ creates and uploads; an API key may name the device", async () => {
    const eu = await endUser();
    const device = await t.call("POST", "/v1/devices", { key: acme.test, body: { serial_number: `SN-${Date.now()}`, model: "parley_pin" } });
    expect(device.status).toBe(201);
    const bound = await t.call("POST", `/v1/devices/${device.body.id}/bind`, { key: acme.test, body: { end_user_id: eu.id } });
    const { recording } = await uploadedRecording(t, bound.body.device_token);
    expect(recording).toMatchObject({ device_id: device.body.id, end_user_id: eu.id, source: "device", status: "uploaded" });
    const byKey = await t.call("POST", "/v1/recordings", { key: acme.test, body: { device_id: device.body.id, end_user_id: eu.id, source: "app_import" } });
    expect(byKey.body).toMatchObject({ device_id: device.body.id, source: "app_import" });
    // The device exists only in test mode of this project.
    expect((await t.call("POST", "/v1/recordings", { key: acme.live, body: { device_id: device.body.id } })).status).toBe(404);
  });

  test("list filters by end user, device, status and recorded_at window, newest first", async () => {
    const eu = await endUser();
    const token = deviceToken(t, acme, "dev_list", eu.id);
    const early = await createRecording(t, token, { recorded_at: "2026-01-01T00:00:00Z" });
    t.clock.advance(1000);
    const late = await createRecording(t, token, { recorded_at: "2026-01-10T00:00:00Z" });
    t.clock.advance(1000);
    const { recording: up } = await uploadedRecording(t, token, "tone-3s.wav", { recorded_at: "2026-01-05T00:00:00Z" });
    const ids = async (q: string) => (await t.call("GET", `/v1/recordings?${q}`, { key: acme.test })).body.data.map((r: any) => r.id);
    expect(await ids(`end_user_id=${eu.id}`)).toEqual([up.id, late.id, early.id]);
    expect(await ids("device_id=dev_list")).toEqual([up.id, late.id, early.id]);
    expect(await ids(`end_user_id=${eu.id}&status=uploaded`)).toEqual([up.id]);
    expect(await ids(`device_id=dev_list&recorded_after=2026-01-05T00:00:00Z`)).toEqual([up.id, late.id]);
    expect(await ids(`device_id=dev_list&recorded_before=2026-01-05T00:00:00Z`)).toEqual([early.id]);
    const page = await t.call("GET", `/v1/recordings?device_id=dev_list&limit=2`, { key: acme.test });
    expect(page.body).toMatchObject({ has_more: true, total: 3 });
    const next = await t.call("GET", `/v1/recordings?device_id=dev_list&limit=2&cursor=${page.body.next_cursor}`, { key: acme.test });
    expect(next.body.data.map((r: any) => r.id)).toEqual([early.id]);
  });
});

describe("recordings: errors", () => {
  test.each([
    [{ recorded_at: "yesterday" }, "recorded_at"],
    [{ source: "fax" }, "source"],
    [{ metadata: [] }, "metadata"],
    [{ consent_obtained: "yes" }, "consent_obtained"],
  ])("invalid body %j is 422 naming %s", async (body, param) => {
    const r = await t.call("POST", "/v1/recordings", { key: acme.test, body });
    expect(r.status).toBe(422);
    expect(r.body.error).toMatchObject({ code: "validation_error", param });
  });

  test("an unknown end user or device is 404 resource_not_found naming the field", async () => {
    const a = await t.call("POST", "/v1/recordings", { key: acme.test, body: { end_user_id: "eu_nope" } });
    expect(a.status).toBe(404);
    expect(a.body.error).toMatchObject({ code: "resource_not_found", param: "end_user_id" });
    const b = await t.call("POST", "/v1/recordings", { key: acme.test, body: { device_id: "dev_nope" } });
    expect(b.body.error).toMatchObject({ code: "resource_not_found", param: "device_id" });
  });

  test("a deleted end user is read-only: creating a recording for it is 409 resource_conflict, by a secret or its scoped key", async () => {
    const eu = await endUser();
    const scoped = acme.key("test", { endUserId: eu.id });
    expect((await t.call("DELETE", `/v1/end-users/${eu.id}`, { key: acme.test })).status).toBe(204);
    for (const [key, body] of [
      [acme.test, { end_user_id: eu.id }],
      [scoped, {}],
    ] as const) {
      const r = await t.call("POST", "/v1/recordings", { key, body });
      expect(r.status).toBe(409);
      expect(r.body.error).toMatchObject({ code: "resource_conflict", param: "end_user_id" });
      expect(r.body.error.message).toContain("deleted");
    }
    const listed = await t.call("GET", `/v1/recordings?end_user_id=${eu.id}`, { key: acme.test });
    expect(listed.body.data).toEqual([]);
  });

  test("unknown ids are 404 not_found", async () => {
    for (const [m, p] of [
      ["GET", ""],
      ["GET", "/audio"],
      ["DELETE", ""],
    ] as const) {
      const r = await t.call(m, `/v1/recordings/rec_nope${p}`, { key: acme.test });
      expect(r.status).toBe(404);
      expect(r.body.error.code).toBe("not_found");
    }
  });

  test("audio of a recording not yet uploaded is 409", async () => {
    const rec = await createRecording(t, acme.test);
    expect((await t.call("GET", `/v1/recordings/${rec.id}/audio`, { key: acme.test })).body.error.code).toBe("resource_conflict");
  });
});

describe("GET /recordings/{id}/audio", () => {
  let id: string;
  let bytes: Uint8Array;
  beforeAll(async () => {
    ({
      recording: { id },
      bytes,
    } = await uploadedRecording(t, acme.test, "tone-3s.flac"));
  });
  const get = (range?: string) =>
    t.app.handle(new Request(`http://localhost/v1/recordings/${id}/audio`, { headers: { authorization: `Bearer ${acme.test}`, ...(range ? { range } : {}) } }));

  test("the whole original with its content type, length and ETag", async () => {
    const r = await get();
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("audio/flac");
    expect(r.headers.get("accept-ranges")).toBe("bytes");
    expect(r.headers.get("content-length")).toBe(String(bytes.length));
    expect(r.headers.get("etag")).toBe(`"${sha256(bytes)}"`);
    expect(sha256(new Uint8Array(await r.arrayBuffer()))).toBe(sha256(bytes));
  });

  test.each([
    ["bytes=0-99", 0, 99],
    ["bytes=100-", 100, -1],
    ["bytes=-50", -50, -1],
    ["bytes=10-999999999", 10, -1],
  ])("Range %s is 206 with the matching slice", async (range, from, to) => {
    const r = await get(range);
    expect(r.status).toBe(206);
    const start = from < 0 ? bytes.length + from : from;
    const end = to < 0 ? bytes.length - 1 : to;
    expect(r.headers.get("content-range")).toBe(`bytes ${start}-${end}/${bytes.length}`);
    expect(new Uint8Array(await r.arrayBuffer())).toEqual(bytes.slice(start, end + 1));
  });

  test("an unsatisfiable range is 416 with Content-Range bytes */size", async () => {
    const r = await get(`bytes=${bytes.length}-`);
    expect(r.status).toBe(416);
    expect(r.headers.get("content-range")).toBe(`bytes */${bytes.length}`);
    expect((await r.json()).error.code).toBe("range_not_satisfiable");
  });

  test("a multi-range or malformed header gets the whole file", async () => {
    expect((await get("bytes=0-1,5-6")).status).toBe(200);
    expect((await get("items=0-1")).status).toBe(200);
  });

  test("each fixture format is served with its type after probing", async () => {
    for (const [file, type] of [
      ["tone-3s.wav", "audio/wav"],
      ["tone-3s.mp3", "audio/mpeg"],
      ["tone-3s.m4a", "audio/mp4"],
      ["tone-3s.opus", "audio/ogg"],
    ]) {
      const { recording } = await uploadedRecording(t, acme.test, file);
      const r = await t.app.handle(new Request(`http://localhost/v1/recordings/${recording.id}/audio`, { headers: { authorization: `Bearer ${acme.test}` } }));
      expect(r.headers.get("content-type")).toBe(type!);
    }
  });
});

describe("DELETE /recordings/{id}", () => {
  test("204; the row, its chunks and stored bytes go, recording.deleted is recorded", async () => {
    const { recording } = await uploadedRecording(t, acme.test);
    const key = t.deps.db.query<{ storage_key: string }, [string]>("SELECT storage_key FROM recordings WHERE id = ?").get(recording.id)!.storage_key;
    expect(await t.deps.storage.size(key)).toBe(fixture("tone-3s.wav").length);
    const r = await t.call("DELETE", `/v1/recordings/${recording.id}`, { key: acme.test });
    expect(r.status).toBe(204);
    expect(r.body).toBeNull();
    expect((await t.call("GET", `/v1/recordings/${recording.id}`, { key: acme.test })).status).toBe(404);
    expect(eventsOf(t, "recording.deleted").find((e) => e.id === recording.id)).toEqual({ id: recording.id, deleted_at: t.clock.now().toISOString() });
    await t.deps.queue.drain();
    expect(await t.deps.storage.size(key)).toBeNull();
    expect((await t.call("DELETE", `/v1/recordings/${recording.id}`, { key: acme.test })).status).toBe(404);
  });

  test("cascades to rows that reference the recording", async () => {
    const { recording } = await uploadedRecording(t, acme.test);
    const count = () => t.deps.db.query<{ n: number }, [string]>("SELECT COUNT(*) AS n FROM recording_uploads WHERE recording_id = ?").get(recording.id)!.n;
    expect(count()).toBe(1);
    await t.call("DELETE", `/v1/recordings/${recording.id}`, { key: acme.test });
    expect(count()).toBe(0);
  });
});

test("every table that references recordings deletes its rows with the recording (ON DELETE CASCADE)", () => {
  const tables = t.deps.db
    .query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'table'")
    .all()
    .map((r) => r.name);
  const refs = tables.flatMap((table) =>
    t.deps.db
      .query<{ table: string; on_delete: string }, []>(`SELECT "table", on_delete FROM pragma_foreign_key_list('${table}')`)
      .all()
      .filter((fk) => fk.table === "recordings")
      .map((fk) => [table, fk.on_delete]),
  );
  expect(refs.map(([table]) => table)).toContain("recording_chunks");
  expect(refs.filter(([, onDelete]) => onDelete !== "CASCADE")).toEqual([]);
});

describe("recordings: security", () => {
  test("another project and the other mode see nothing", async () => {
    const { recording } = await uploadedRecording(t, acme.test);
    for (const key of [other.test, other.live, acme.live]) {
      for (const [m, p] of [
        ["GET", ""],
        ["GET", "/audio"],
        ["DELETE", ""],
      ] as const) {
        expect((await t.call(m, `/v1/recordings/${recording.id}${p}`, { key })).status).toBe(404);
      }
      expect((await t.call("GET", "/v1/recordings", { key })).body.data.some((r: any) => r.id === recording.id)).toBe(false);
    }
  });

  test("restricted keys need recordings:read / recordings:write", async () => {
    const rec = await createRecording(t, acme.test);
    const read = acme.key("test", { scopes: ["recordings:read"] });
    const write = acme.key("test", { scopes: ["recordings:write"] });
    expect((await t.call("POST", "/v1/recordings", { key: read, body: {} })).status).toBe(403);
    expect((await t.call("DELETE", `/v1/recordings/${rec.id}`, { key: read })).status).toBe(403);
    expect((await t.call("GET", `/v1/recordings/${rec.id}`, { key: read })).status).toBe(200);
    expect((await t.call("GET", `/v1/recordings/${rec.id}`, { key: write })).status).toBe(403);
    expect((await t.call("GET", "/v1/recordings", { key: write })).status).toBe(403);
    expect((await t.call("POST", "/v1/recordings", { key: write, body: {} })).status).toBe(201);
  });

  test("a device token may only create and upload: reading, listing and deleting are 403", async () => {
    const token = deviceToken(t, acme, "dev_sec", null);
    const rec = await createRecording(t, token);
    expect((await t.call("GET", `/v1/recordings/${rec.id}`, { key: token })).status).toBe(403);
    expect((await t.call("GET", "/v1/recordings", { key: token })).status).toBe(403);
    expect((await t.call("DELETE", `/v1/recordings/${rec.id}`, { key: token })).status).toBe(403);
  });

  test("an end-user-scoped key sees and creates only its end user's recordings", async () => {
    const mine = await endUser();
    const theirs = await endUser();
    const scoped = acme.key("test", { endUserId: mine.id });
    const own = await createRecording(t, scoped);
    expect(own.end_user_id).toBe(mine.id);
    expect((await t.call("POST", "/v1/recordings", { key: scoped, body: { end_user_id: theirs.id } })).status).toBe(403);
    const foreign = await createRecording(t, acme.test, { end_user_id: theirs.id });
    expect((await t.call("GET", `/v1/recordings/${foreign.id}`, { key: scoped })).status).toBe(404);
    expect((await t.call("DELETE", `/v1/recordings/${foreign.id}`, { key: scoped })).status).toBe(404);
    const listed = (await t.call("GET", "/v1/recordings", { key: scoped })).body.data.map((r: any) => r.end_user_id);
    expect(new Set(listed)).toEqual(new Set([mine.id]));
    expect((await t.call("GET", `/v1/recordings?end_user_id=${theirs.id}`, { key: scoped })).status).toBe(403);
  });
});
