import { beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { addFirmware, firmwarePath, publishRelease } from "../../src/modules/firmware/releases";
import { makeTempDir, makeTenant, makeTestApp } from "../helpers";
import { boundDevice } from "./device-runtime-fixtures";

let t: Awaited<ReturnType<typeof makeTestApp>>;
let acme: ReturnType<typeof makeTenant>;
let orgId: string;
const bytes = Buffer.from("PARLEY-FW\u0000\u0001\u0002 image body");

function release(version: string, options: { model?: "parley_pin" | "parley_note"; publish?: boolean } = {}) {
  const file = join(makeTempDir(), `${version}.bin`);
  writeFileSync(file, bytes);
  return addFirmware(
    t.deps.db,
    t.deps.config.dataDir,
    { organizationId: orgId, version, model: options.model ?? "parley_pin", file, notes: `notes ${version}`, publish: options.publish ?? true },
    t.clock.now(),
  );
}

beforeAll(async () => {
  t = await makeTestApp();
  acme = makeTenant(t.deps, "fw-acme");
  orgId = acme.project.organization_id;
});

const assign = (deviceId: string, fw: string, key = acme.test) => t.call("POST", `/v1/devices/${deviceId}/ota`, { key, body: { firmware_release_id: fw } });

describe("firmware releases (decisions.md)", () => {
  test("add records sha256 and size; API keys list only published releases with firmware:read", async () => {
    const draft = release("1.0.0-draft", { publish: false });
    expect(draft).toMatchObject({ status: "draft", published_at: null, size_bytes: bytes.length, sha256: createHash("sha256").update(bytes).digest("hex") });
    const pub = release("1.0.1");
    const list = await t.call("GET", "/v1/firmware-releases", { key: acme.test });
    expect(list.status).toBe(200);
    expect(list.body.data.map((r: any) => r.id)).toContain(pub.id);
    expect(list.body.data.map((r: any) => r.id)).not.toContain(draft.id);
    expect((await t.call("GET", `/v1/firmware-releases/${draft.id}`, { key: acme.test })).status).toBe(404);
    publishRelease(t.deps.db, orgId, draft.id, t.clock.now());
    expect((await t.call("GET", `/v1/firmware-releases/${draft.id}`, { key: acme.test })).body.status).toBe("published");
    expect((await t.call("GET", "/v1/firmware-releases", { key: acme.key("test", { scopes: ["firmware:read"] }) })).status).toBe(200);
    expect((await t.call("GET", "/v1/firmware-releases", { key: acme.key("test", { scopes: ["devices:read"] }) })).status).toBe(403);
    expect(() => release("1.0.1")).toThrow(/already registered/);
  });
});

describe("OTA assignment (spec 2.11, 3.5, 4.2)", () => {
  test("201 pending with the spec's fields; 409 resource_conflict while in flight", async () => {
    const fw = release("2.0.0");
    const d = await boundDevice(t, acme.test);
    const r = await assign(d.id, fw.id);
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      device_id: d.id,
      firmware_release_id: fw.id,
      status: "pending",
      assigned_at: t.clock.now().toISOString(),
      delivered_at: null,
      applied_at: null,
      error_message: null,
    });
    expect(r.body.id).toMatch(/^ota_/);
    expect(r.body.firmware).toEqual({
      version: "2.0.0",
      model: "parley_pin",
      sha256: fw.sha256,
      size_bytes: fw.size_bytes,
      download_path: `/v1/devices/${d.id}/ota/${r.body.id}/firmware`,
    });
    const again = await assign(d.id, fw.id);
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe("resource_conflict");
  });

  test("404 not_found 'FirmwareRelease not found' for unknown or unpublished releases; 400 for another model; 404 for an unknown device", async () => {
    const d = await boundDevice(t, acme.test);
    for (const id of ["fw_unknown", release("2.1.0-rc", { publish: false }).id]) {
      const r = await assign(d.id, id);
      expect(r.status).toBe(404);
      expect(r.body.error).toMatchObject({ code: "not_found", message: "FirmwareRelease not found" });
    }
    const note = await assign(d.id, release("2.1.0-note", { model: "parley_note" }).id);
    expect(note.status).toBe(400);
    expect(note.body.error.param).toBe("firmware_release_id");
    expect((await assign("dev_unknown", release("2.1.1").id)).status).toBe(404);
  });

  test("pending -> delivered by a direct heartbeat (not by a Bluetooth relay) -> progress -> applied", async () => {
    const fw = release("3.0.0");
    const d = await boundDevice(t, acme.test);
    const ota = (await assign(d.id, fw.id)).body;
    expect((await d.heartbeat({ channel: "bluetooth" })).body.ota).toBeNull();
    expect((await t.call("GET", `/v1/devices/${d.id}/ota/${ota.id}`, { key: acme.test })).body.status).toBe("pending");
    t.clock.advance(1_000);
    const hb = await d.heartbeat({ channel: "wifi" });
    expect(hb.body.ota).toMatchObject({ id: ota.id, status: "delivered", delivered_at: t.clock.now().toISOString() });
    // Repeated while in flight, so a lost response does not strand the update.
    expect((await d.heartbeat()).body.ota.id).toBe(ota.id);

    const dl = await t.call("GET", `/v1/devices/${d.id}/ota/${ota.id}/firmware`, { key: d.token });
    expect(dl.status).toBe(200);
    expect(dl.headers.get("x-firmware-sha256")).toBe(fw.sha256);
    expect(createHash("sha256").update(String(dl.body)).digest("hex")).toBe(fw.sha256);

    await d.heartbeat({ ota_status: { ota_id: ota.id, status: "downloading", progress_percent: 40 } });
    const mid = (await t.call("GET", `/v1/devices/${d.id}/ota/${ota.id}`, { key: acme.test })).body;
    expect(mid).toMatchObject({ status: "delivered", progress: { stage: "downloading", percent: 40 } });
    t.clock.advance(60_000);
    const done = await d.heartbeat({ firmware_version: "3.0.0", ota_status: { ota_id: ota.id, status: "applied" } });
    expect(done.body.ota).toBeNull();
    const applied = (await t.call("GET", `/v1/devices/${d.id}/ota/${ota.id}`, { key: acme.test })).body;
    expect(applied).toMatchObject({ status: "applied", applied_at: t.clock.now().toISOString() });
    expect((await t.call("GET", `/v1/devices/${d.id}/ota/${ota.id}/firmware`, { key: d.token })).status).toBe(404);
    // Finished: a new assignment is accepted.
    expect((await assign(d.id, release("3.0.1").id)).status).toBe(201);
  });

  test("failed report records error_message; cancel of a finished assignment is 409; cancel in flight frees the slot", async () => {
    const d = await boundDevice(t, acme.test);
    const first = (await assign(d.id, release("4.0.0").id)).body;
    await d.heartbeat();
    await d.heartbeat({ ota_status: { ota_id: first.id, status: "failed", error_message: "signature check failed" } });
    const failed = (await t.call("GET", `/v1/devices/${d.id}/ota/${first.id}`, { key: acme.test })).body;
    expect(failed).toMatchObject({ status: "failed", error_message: "signature check failed" });
    expect((await t.call("POST", `/v1/devices/${d.id}/ota/${first.id}/cancel`, { key: acme.test })).status).toBe(409);
    const second = (await assign(d.id, release("4.0.1").id)).body;
    const cancelled = await t.call("POST", `/v1/devices/${d.id}/ota/${second.id}/cancel`, { key: acme.test });
    expect(cancelled.body.status).toBe("cancelled");
    expect((await d.heartbeat()).body.ota).toBeNull();
    const list = await t.call("GET", `/v1/devices/${d.id}/ota`, { key: acme.test });
    expect(list.body.data.map((o: any) => o.id)).toEqual([second.id, first.id]);
  });

  test("only the device's own token downloads firmware", async () => {
    const d = await boundDevice(t, acme.test);
    const e = await boundDevice(t, acme.test);
    const ota = (await assign(d.id, release("5.0.0").id)).body;
    await d.heartbeat();
    expect((await t.call("GET", `/v1/devices/${d.id}/ota/${ota.id}/firmware`, { key: e.token })).status).toBe(403);
    expect((await t.call("GET", `/v1/devices/${d.id}/ota/${ota.id}/firmware`, { key: acme.test })).status).toBe(403);
    expect((await t.call("GET", `/v1/devices/${d.id}/ota/${ota.id}/firmware`)).status).toBe(401);
  });
});

describe("firmware download with the image gone from the data dir", () => {
  test("404 not_found in the spec's error body (no broken stream), naming the release", async () => {
    const fw = release("6.0.0");
    const d = await boundDevice(t, acme.test);
    const ota = (await assign(d.id, fw.id)).body;
    await d.heartbeat();
    rmSync(firmwarePath(t.deps.config.dataDir, fw.id));
    const dl = await t.call("GET", `/v1/devices/${d.id}/ota/${ota.id}/firmware`, { key: d.token });
    expect(dl.status).toBe(404);
    expect(dl.body.error).toMatchObject({ code: "not_found" });
    expect(dl.body.error.message).toContain(fw.id);
    expect(dl.body.error.request_id).toBeString();
  });
});

describe("POST /firmware-releases and /publish (live secret keys only)", () => {
  async function upload(query: string, body: BodyInit | null, key: string | null = acme.live, extra: Record<string, string> = {}) {
    const headers: Record<string, string> = { "content-type": "application/octet-stream", ...extra };
    if (key) headers.authorization = `Bearer ${key}`;
    const res = await t.app.handle(new Request(`http://localhost/v1/firmware-releases?${query}`, { method: "POST", headers, body }));
    return { status: res.status, body: (await res.json()) as any, headers: res.headers };
  }
  // Partial images: beside the releases (the CLI's temp name) or in the atomic writer's temp folder.
  const leftovers = () => [
    ...readdirSync(join(t.deps.config.dataDir, "firmware")).filter((f) => f.endsWith(".tmp")),
    ...readdirSync(join(t.deps.config.dataDir, ".tmp")),
  ];

  test("the raw body becomes a draft with its sha256; publish lists it and makes it assignable and downloadable", async () => {
    const r = await upload("version=10.0.0&model=parley_pin&notes=api%20upload", bytes);
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      version: "10.0.0",
      model: "parley_pin",
      notes: "api upload",
      status: "draft",
      published_at: null,
      size_bytes: bytes.length,
      sha256: createHash("sha256").update(bytes).digest("hex"),
    });
    expect(readFileSync(firmwarePath(t.deps.config.dataDir, r.body.id))).toEqual(bytes);
    expect((await t.call("GET", `/v1/firmware-releases/${r.body.id}`, { key: acme.test })).status).toBe(404);

    const pub = await t.call("POST", `/v1/firmware-releases/${r.body.id}/publish`, { key: acme.live });
    expect(pub.status).toBe(200);
    expect(pub.body).toMatchObject({ id: r.body.id, status: "published", published_at: t.clock.now().toISOString() });
    expect((await t.call("POST", `/v1/firmware-releases/${r.body.id}/publish`, { key: acme.live })).body.published_at).toBe(pub.body.published_at);
    const d = await boundDevice(t, acme.test);
    const ota = (await assign(d.id, r.body.id)).body;
    await d.heartbeat();
    const dl = await t.call("GET", `/v1/devices/${d.id}/ota/${ota.id}/firmware`, { key: d.token });
    expect(createHash("sha256").update(String(dl.body)).digest("hex")).toBe(r.body.sha256);
  });

  test("test, restricted and end-user-scoped keys and device tokens are 403; no credential is 401", async () => {
    const draft = release("10.1.0", { publish: false });
    const user = (await t.call("POST", "/v1/end-users", { key: acme.live, body: {} })).body;
    const d = await boundDevice(t, acme.test);
    const refused = [acme.test, acme.key("live", { scopes: ["firmware:read", "devices:write"] }), acme.key("live", { endUserId: user.id }), d.token];
    for (const key of refused) {
      const created = await upload("version=10.1.1&model=parley_pin", bytes, key);
      expect([created.status, created.body.error.code]).toEqual([403, "forbidden"]);
      expect((await t.call("POST", `/v1/firmware-releases/${draft.id}/publish`, { key })).status).toBe(403);
    }
    expect((await upload("version=10.1.1&model=parley_pin", bytes, null)).status).toBe(401);
    expect((await t.call("GET", `/v1/firmware-releases/${draft.id}`, { key: acme.test })).status).toBe(404);
    expect(leftovers()).toEqual([]);
  });

  test("another organization's release, or an unknown one, is 404 to publish", async () => {
    t.deps.db.query("INSERT INTO organizations (id, name, created_at) VALUES ('org_fw_other', 'fw-other', ?)").run(t.clock.now().toISOString());
    const file = join(makeTempDir(), "other.bin");
    writeFileSync(file, bytes);
    const foreign = addFirmware(
      t.deps.db,
      t.deps.config.dataDir,
      { organizationId: "org_fw_other", version: "1.0.0", model: "parley_pin", file },
      t.clock.now(),
    );
    for (const id of [foreign.id, "fw_unknown"]) {
      const r = await t.call("POST", `/v1/firmware-releases/${id}/publish`, { key: acme.live });
      expect([r.status, r.body.error.code]).toEqual([404, "not_found"]);
    }
  });

  test("409 for a registered version, 422 for an empty body or a bad query, 413 past 64 MiB; nothing is left on disk", async () => {
    expect((await upload("version=11.0.0&model=parley_note", bytes)).status).toBe(201);
    const dup = await upload("version=11.0.0&model=parley_note", bytes);
    expect([dup.status, dup.body.error.code, dup.body.error.param]).toEqual([409, "resource_already_exists", "version"]);
    const empty = await upload("version=11.0.1&model=parley_note", new Uint8Array(0));
    expect([empty.status, empty.body.error.code]).toEqual([422, "validation_error"]);
    for (const [query, param] of [
      ["version=11.0.2&model=svc_pin", "model"],
      [`version=${"9".repeat(33)}&model=parley_pin`, "version"],
      ["model=parley_pin", "version"],
    ]) {
      const bad = await upload(query as string, bytes);
      expect([bad.status, bad.body.error.param]).toEqual([422, param]);
    }
    // Streamed in 1 MiB chunks without a length, so only the running count can stop it.
    const mib = new Uint8Array(1024 * 1024);
    let sent = 0;
    const huge = new ReadableStream<Uint8Array>({ pull: (c) => (++sent > 65 ? c.close() : c.enqueue(mib)) });
    const big = await upload("version=11.0.3&model=parley_note", huge);
    expect([big.status, big.body.error.code]).toEqual([413, "payload_too_large"]);
    expect(leftovers()).toEqual([]);
    const stored = t.deps.db.query<{ n: number }, []>("SELECT COUNT(*) AS n FROM firmware_releases WHERE version LIKE '11.0.%'").get()?.n;
    expect(stored).toBe(1);
  });

  test("an Idempotency-Key replay returns the same release; the key with other parameters is 409", async () => {
    const headers = { "idempotency-key": "fw-upload-12" };
    const first = await upload("version=12.0.0&model=parley_pin", bytes, acme.live, headers);
    const again = await upload("version=12.0.0&model=parley_pin", bytes, acme.live, headers);
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.body).toEqual(first.body);
    const other = await upload("version=12.0.1&model=parley_pin", bytes, acme.live, headers);
    expect([other.status, other.body.error.code]).toEqual([409, "idempotency_key_conflict"]);
  });
});

describe("parley firmware CLI", () => {
  test("add --publish --json then list", async () => {
    const dataDir = makeTempDir();
    const file = join(dataDir, "img.bin");
    writeFileSync(file, bytes);
    const env = { ...process.env, PARLEY_DATA_DIR: dataDir, PARLEY_LOG_LEVEL: "silent" };
    const run = (args: string[]) => Bun.spawnSync([process.execPath, "src/cli.ts", "firmware", ...args], { env });
    const added = run(["add", "--version", "7.1.0", "--model", "parley_note", "--file", file, "--notes", "fixes", "--publish", "--json"]);
    expect(added.exitCode).toBe(0);
    const rec = JSON.parse(added.stdout.toString());
    expect(rec).toMatchObject({ version: "7.1.0", model: "parley_note", status: "published", notes: "fixes" });
    expect(rec.id).toMatch(/^fw_/);
    expect(run(["list"]).stdout.toString()).toContain(rec.id);
    expect(run(["add", "--version", "7.1.0"]).exitCode).toBe(2);
  });
});
